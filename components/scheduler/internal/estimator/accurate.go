package estimator

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// Accurate asks each member's scheduler estimator, which counts from the
// member's nodes and pods (node claims, fragmentation, quotas) instead of
// the Cluster's summary. An estimator that does not answer in time has no
// opinion (Unknown): the general estimate then stands alone.
type Accurate struct {
	dialer *estimatorrpc.Dialer
	// skipPull leaves Pull clusters to the general estimator
	// (--disable-scheduler-estimator-in-pull-mode).
	skipPull bool
}

var _ Estimator = (*Accurate)(nil)

// NewAccurate asks the estimators dialer reaches.
func NewAccurate(dialer *estimatorrpc.Dialer, skipPull bool) *Accurate {
	return &Accurate{dialer: dialer, skipPull: skipPull}
}

// MaxAvailableReplicas implements Estimator: the clusters are asked at once.
func (a *Accurate) MaxAvailableReplicas(ctx context.Context, targets []*Target, req *Requirements, out []int32) error {
	logger := log.FromContext(ctx)
	ask := a.question(req)
	var wg sync.WaitGroup
	for i, t := range targets {
		out[i] = Unknown
		if a.skipPull && t.Cluster.Spec.SyncMode == clusterv1alpha1.Pull {
			continue
		}
		wg.Go(func() {
			n, err := ask(ctx, t.Name())
			if err != nil {
				a.failed(logger, t.Name(), err)
				return
			}
			out[i] = n
		})
	}
	wg.Wait()
	return nil
}

// question builds the request once per scheduling cycle and returns the
// call for one cluster.
func (a *Accurate) question(req *Requirements) func(ctx context.Context, cluster string) (int32, error) {
	if req.Components != nil {
		components, namespace := Components(req.Components), req.Namespace
		return a.asker(func(ctx context.Context, c *estimatorrpc.Client, cluster string) (int32, error) {
			resp, err := c.MaxAvailableComponentSets(ctx, &estimatorrpc.MaxAvailableComponentSetsRequest{Cluster: cluster, Components: components, Namespace: namespace})
			if err != nil {
				return 0, err
			}
			return resp.MaxSets, nil
		})
	}
	requirements := Replica(req.Replica)
	return a.asker(func(ctx context.Context, c *estimatorrpc.Client, cluster string) (int32, error) {
		resp, err := c.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{Cluster: cluster, ReplicaRequirements: requirements})
		if err != nil {
			return 0, err
		}
		return resp.MaxReplicas, nil
	})
}

// asker wraps call with the cluster's client and the per-call timeout.
func (a *Accurate) asker(call func(context.Context, *estimatorrpc.Client, string) (int32, error)) func(context.Context, string) (int32, error) {
	return func(ctx context.Context, cluster string) (int32, error) {
		c, err := a.dialer.Client(ctx, cluster)
		if err != nil {
			return 0, err
		}
		ctx, cancel := context.WithTimeout(ctx, a.dialer.Timeout())
		defer cancel()
		return call(ctx, c, cluster)
	}
}

// failed logs an estimator that did not answer and tells the dialer.
func (a *Accurate) failed(logger logr.Logger, cluster string, err error) {
	logger.V(2).Info("Scheduler estimator did not answer; using the general estimate", "cluster", cluster, "err", err.Error())
	a.dialer.Failed(cluster, err)
}

// Replica is the estimator's form of a binding's replica requirements.
func Replica(rr *workv1alpha2.ReplicaRequirements) estimatorrpc.ReplicaRequirements {
	if rr == nil {
		return estimatorrpc.ReplicaRequirements{}
	}
	return estimatorrpc.ReplicaRequirements{
		NodeClaim:         nodeClaim(rr.NodeClaim),
		ResourceRequest:   rr.ResourceRequest,
		Namespace:         rr.Namespace,
		PriorityClassName: rr.PriorityClassName,
	}
}

// Components is the estimator's form of a binding's components.
func Components(in []workv1alpha2.Component) []estimatorrpc.Component {
	out := make([]estimatorrpc.Component, len(in))
	for i, c := range in {
		out[i] = estimatorrpc.Component{Name: c.Name, Replicas: c.Replicas}
		if rr := c.ReplicaRequirements; rr != nil {
			out[i].ReplicaRequirements = estimatorrpc.ComponentReplicaRequirements{
				NodeClaim:         nodeClaim(rr.NodeClaim),
				ResourceRequest:   rr.ResourceRequest,
				PriorityClassName: rr.PriorityClassName,
			}
		}
	}
	return out
}

func nodeClaim(c *workv1alpha2.NodeClaim) *estimatorrpc.NodeClaim {
	if c == nil {
		return nil
	}
	return &estimatorrpc.NodeClaim{NodeAffinity: c.HardNodeAffinity, NodeSelector: c.NodeSelector, Tolerations: c.Tolerations}
}
