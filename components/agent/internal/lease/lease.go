// Package lease renews, in the control plane, the Lease karmada-cluster/<cluster>
// that tells the cluster controller the agent of a Pull member is alive: a
// lease left unrenewed for the controller-manager's
// --cluster-monitor-grace-period turns the member's Ready to Unknown.
package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Defaults of karmada-agent's --cluster-lease-duration and
// --cluster-lease-renew-interval-fraction.
const (
	DefaultDuration              = 40 * time.Second
	DefaultRenewIntervalFraction = 0.25
)

// Renewer keeps the lease of one Pull cluster renewed. It is a
// controller-runtime Runnable: add it to the agent's manager.
type Renewer struct {
	// Client reaches the control plane without a cache: the agent may read
	// only its own Lease and Cluster.
	Client      client.Client
	ClusterName string
	// Duration is the lease's leaseDurationSeconds. Default: DefaultDuration.
	Duration time.Duration
	// RenewInterval is the time between two renewals. Default: Duration ×
	// DefaultRenewIntervalFraction.
	RenewInterval time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// NeedLeaderElection: every agent renews its own member's lease.
func (r *Renewer) NeedLeaderElection() bool { return false }

// Start renews until ctx is done. A failed renewal is logged and tried again
// on the next tick: the lease's whole point is to go stale when the agent
// cannot reach the control plane.
func (r *Renewer) Start(ctx context.Context) error {
	if r.Client == nil || r.ClusterName == "" {
		return errors.New("lease renewer: Client and ClusterName are required")
	}
	if r.Duration <= 0 {
		r.Duration = DefaultDuration
	}
	if r.RenewInterval <= 0 {
		r.RenewInterval = time.Duration(float64(r.Duration) * DefaultRenewIntervalFraction)
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	log := ctrl.LoggerFrom(ctx).WithName("lease").WithValues("cluster", r.ClusterName)
	ctx = ctrl.LoggerInto(ctx, log)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := r.Renew(ctx); err != nil {
			log.Error(err, "Renewing the cluster lease")
		}
	}, r.RenewInterval)
	return nil
}

// Renew creates the lease, owned by the Cluster so that it goes with it,
// or moves its renewTime to now. While the Cluster is missing or being
// deleted there is nothing to renew: an unregistered member is not alive
// to anyone.
func (r *Renewer) Renew(ctx context.Context) error {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: r.ClusterName}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).V(1).Info("Cluster not registered; not renewing its lease")
			return nil
		}
		return fmt.Errorf("reading Cluster %s: %w", r.ClusterName, err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return nil
	}
	now := metav1.NewMicroTime(r.Now())
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: clusterv1alpha1.NamespaceClusterLeases, Name: r.ClusterName}
	err := r.Client.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: key.Namespace, Name: key.Name,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: clusterv1alpha1.GroupVersion.String(), Kind: "Cluster",
					Name: cluster.Name, UID: cluster.UID,
				}},
			},
			Spec: r.spec(now),
		}
		if err := r.Client.Create(ctx, lease); err != nil {
			return fmt.Errorf("creating lease %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading lease %s: %w", key, err)
	}
	lease.Spec = r.spec(now)
	if err := r.Client.Update(ctx, lease); err != nil {
		return fmt.Errorf("renewing lease %s: %w", key, err)
	}
	return nil
}

func (r *Renewer) spec(now metav1.MicroTime) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(r.ClusterName),
		LeaseDurationSeconds: ptr.To(int32(r.Duration.Seconds())),
		RenewTime:            &now,
	}
}
