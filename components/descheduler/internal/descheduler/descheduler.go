// Package descheduler takes replicas of dynamically weighted Deployments off
// the clusters that cannot run them: every interval it asks the estimators
// of the clusters whose ready replicas lag their share how many replicas
// have been unschedulable for longer than the threshold, and lowers those
// clusters' share in spec.clusters. The scheduler sees the replicas missing
// and places them where the estimators say they fit, as with Karmada's
// descheduler.
package descheduler

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kevents "k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
	"github.com/flotilla-io/flotilla/internal/events"
)

// Estimators answers how many replicas of a workload are unschedulable in
// a cluster; estimatorrpc.Dialer's clients do.
type Estimators interface {
	Client(ctx context.Context, cluster string) (*estimatorrpc.Client, error)
	Failed(cluster string, err error)
	Timeout() time.Duration
}

// Options configure the descheduler.
type Options struct {
	// Interval between two passes over the bindings.
	Interval time.Duration
	// Threshold is how long a pod must have been unschedulable to count.
	Threshold time.Duration
	// Workers is how many bindings are descheduled at once.
	Workers int
	// Recorder records events on bindings and templates; nil records none.
	Recorder kevents.EventRecorder
}

// Descheduler is a manager runnable; it needs leader election, as two
// would lower the same shares twice.
type Descheduler struct {
	client     client.Client
	estimators Estimators
	opts       Options
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=services,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch

// New makes a descheduler reading bindings through c (the manager's cached
// client) and asking estimators.
func New(c client.Client, estimators Estimators, opts Options) *Descheduler {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	return &Descheduler{client: c, estimators: estimators, opts: opts}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (d *Descheduler) NeedLeaderElection() bool { return true }

// Start runs a pass every interval until ctx is done.
func (d *Descheduler) Start(ctx context.Context) error {
	log.FromContext(ctx).Info("Starting descheduler", "interval", d.opts.Interval, "unschedulableThreshold", d.opts.Threshold)
	wait.UntilWithContext(ctx, d.Once, d.opts.Interval)
	return nil
}

// Once is one pass over every eligible binding.
func (d *Descheduler) Once(ctx context.Context) {
	logger := log.FromContext(ctx)
	var list workv1alpha2.ResourceBindingList
	if err := d.client.List(ctx, &list); err != nil {
		logger.Error(err, "Listing ResourceBindings")
		return
	}
	work := make(chan *workv1alpha2.ResourceBinding)
	var wg sync.WaitGroup
	for range d.opts.Workers {
		wg.Go(func() {
			for rb := range work {
				if err := d.Deschedule(ctx, rb); err != nil {
					logger.Error(err, "Descheduling", "resourceBinding", client.ObjectKeyFromObject(rb))
				}
			}
		})
	}
	for i := range list.Items {
		if Eligible(&list.Items[i]) {
			work <- &list.Items[i]
		}
	}
	close(work)
	wg.Wait()
}

// Deschedule asks the estimators about rb's lagging clusters and lowers
// their shares by what cannot be scheduled there. The write is guarded by
// rb's resourceVersion: a binding that changed meanwhile waits for the
// next pass.
func (d *Descheduler) Deschedule(ctx context.Context, rb *workv1alpha2.ResourceBinding) error {
	targets := Targets(rb)
	lagging := Lagging(targets)
	if len(lagging) == 0 {
		return nil
	}
	d.fillUnschedulable(ctx, rb, targets, lagging)
	clusters, moved, message := Plan(rb.Spec.Clusters, targets)
	if moved == 0 {
		return nil
	}
	patched := rb.DeepCopy()
	patched.Spec.Clusters = clusters
	err := d.client.Patch(ctx, patched, client.MergeFromWithOptions(rb, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		d.event(rb, corev1.EventTypeWarning, events.ReasonDescheduleBindingFailed, err.Error())
		return fmt.Errorf("writing spec.clusters: %w", err)
	}
	log.FromContext(ctx).Info("Descheduled", "resourceBinding", client.ObjectKeyFromObject(rb), "replicas", moved)
	d.event(rb, corev1.EventTypeNormal, events.ReasonDescheduleBindingSucceed, message)
	return nil
}

// fillUnschedulable asks every lagging cluster's estimator at once. A
// cluster whose estimator does not answer loses nothing: unknown is not
// unschedulable.
func (d *Descheduler) fillUnschedulable(ctx context.Context, rb *workv1alpha2.ResourceBinding, targets []Target, lagging []int) {
	logger := log.FromContext(ctx)
	ref := estimatorrpc.ObjectReference{
		APIVersion: rb.Spec.Resource.APIVersion,
		Kind:       rb.Spec.Resource.Kind,
		Namespace:  rb.Spec.Resource.Namespace,
		Name:       rb.Spec.Resource.Name,
	}
	var wg sync.WaitGroup
	for _, i := range lagging {
		wg.Go(func() {
			n, err := d.ask(ctx, targets[i].Name, ref)
			if err != nil {
				logger.V(2).Info("Scheduler estimator did not answer", "cluster", targets[i].Name, "err", err.Error())
				return
			}
			targets[i].Unschedulable = n
		})
	}
	wg.Wait()
}

func (d *Descheduler) ask(ctx context.Context, cluster string, ref estimatorrpc.ObjectReference) (int32, error) {
	c, err := d.estimators.Client(ctx, cluster)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.estimators.Timeout())
	defer cancel()
	resp, err := c.GetUnschedulableReplicas(ctx, &estimatorrpc.UnschedulableReplicasRequest{Cluster: cluster, Resource: ref, UnschedulableThreshold: d.opts.Threshold})
	if err != nil {
		d.estimators.Failed(cluster, err)
		return 0, err
	}
	if resp.UnschedulableReplicas < 0 || resp.UnschedulableReplicas == math.MaxInt32 {
		return 0, fmt.Errorf("estimator of %s answered %d", cluster, resp.UnschedulableReplicas)
	}
	return resp.UnschedulableReplicas, nil
}

func (d *Descheduler) event(rb *workv1alpha2.ResourceBinding, eventType, reason, note string) {
	if d.opts.Recorder == nil {
		return
	}
	d.opts.Recorder.Eventf(rb, nil, eventType, reason, "Deschedule", note)
	r := rb.Spec.Resource
	if r.Kind == "" || r.Name == "" || r.APIVersion == "" {
		return
	}
	var template runtime.Object = &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: r.APIVersion, Kind: r.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name, UID: r.UID},
	}
	d.opts.Recorder.Eventf(template, rb, eventType, reason, "Deschedule", note)
}
