// Package taintmanager is Karmada's taint-manager: it evicts bindings from
// clusters tainted NoExecute that they do not tolerate, through graceful
// eviction tasks, so that the scheduler places them elsewhere.
package taintmanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/eviction"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

// ControllerName is Karmada's name for this controller.
const ControllerName = "taint-manager"

// TargetClusterIndex indexes bindings by the clusters of spec.clusters.
const TargetClusterIndex = "spec.clusters.name"

// DefaultRetryPeriod is how often a cluster tainted NoExecute is looked at
// again, for bindings placed on it since (Karmada's
// ClusterTaintEvictionRetryFrequency).
const DefaultRetryPeriod = 10 * time.Second

const actionEvict = "Evict"

// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconciler evicts, from one Cluster with NoExecute taints, every binding
// that does not tolerate them.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// PurgeMode applies to bindings whose policy sets no
	// failover.cluster.purgeMode (--no-execute-taint-eviction-purge-mode).
	PurgeMode policyv1alpha1.PurgeMode
	// Graceful keeps the evicted copy until its replacement is up, through
	// a graceful eviction task (GracefulEviction); otherwise it goes at
	// once.
	Graceful bool
	// PreserveState carries failover.cluster.statePreservation
	// (StatefulFailoverInjection).
	PreserveState           bool
	RetryPeriod             time.Duration
	MaxConcurrentReconciles int
	// EvictionWorkers bound the bindings of one cluster written at once.
	// Default: 16.
	EvictionWorkers int
	// Now is time.Now when nil.
	Now func() time.Time
}

// SetupWithManager indexes bindings by target cluster and watches Clusters
// whose taints change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("taint manager: Client and Recorder are required")
	}
	if r.PurgeMode == "" {
		r.PurgeMode = policyv1alpha1.PurgeModeGracefully
	}
	if r.RetryPeriod <= 0 {
		r.RetryPeriod = DefaultRetryPeriod
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	if r.EvictionWorkers <= 0 {
		r.EvictionWorkers = 16
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	ctx := context.Background()
	for _, obj := range []client.Object{&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, TargetClusterIndex, targetClusters); err != nil {
			return fmt.Errorf("indexing %T by target cluster: %w", obj, err)
		}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

func targetClusters(obj client.Object) []string {
	v, ok := binding.AsView(obj)
	if !ok {
		return nil
	}
	names := make([]string, len(v.Spec.Clusters))
	for i, c := range v.Spec.Clusters {
		names[i] = c.Name
	}
	return names
}

// Reconcile evicts what must go now and comes back when the next
// toleration runs out, and every RetryPeriod while NoExecute taints stay.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	taints := noExecute(cluster.Spec.Taints)
	if len(taints) == 0 {
		return ctrl.Result{}, nil
	}
	views, err := r.bindingsOn(ctx, cluster.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Now()
	next := r.RetryPeriod
	var due []binding.View
	for _, v := range views {
		if !v.Object.GetDeletionTimestamp().IsZero() || v.Spec.Placement == nil {
			continue
		}
		wait, evict := Decide(taints, v.Spec.Placement.ClusterTolerations, now)
		if evict {
			due = append(due, v)
		} else if wait > 0 && wait < next {
			next = wait
		}
	}
	// A cluster lost takes every binding on it at once: the writes go in
	// parallel, as Karmada's eviction workers do.
	var (
		mu        sync.Mutex
		errs      []error
		conflicts bool
		g         errgroup.Group
	)
	g.SetLimit(r.EvictionWorkers)
	for _, v := range due {
		g.Go(func() error {
			conflict, err := r.evict(ctx, v, cluster.Name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			conflicts = conflicts || conflict
			return nil
		})
	}
	_ = g.Wait()
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if conflicts {
		// Bindings change all the time (their status): those written
		// meanwhile are evicted on a pass that comes at once.
		return ctrl.Result{RequeueAfter: eviction.ConflictRetry}, nil
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

func (r *Reconciler) bindingsOn(ctx context.Context, cluster string) ([]binding.View, error) {
	on := client.MatchingFields{TargetClusterIndex: cluster}
	rbs := &workv1alpha2.ResourceBindingList{}
	if err := r.Client.List(ctx, rbs, on); err != nil {
		return nil, fmt.Errorf("listing ResourceBindings on %s: %w", cluster, err)
	}
	crbs := &workv1alpha2.ClusterResourceBindingList{}
	if err := r.Client.List(ctx, crbs, on); err != nil {
		return nil, fmt.Errorf("listing ClusterResourceBindings on %s: %w", cluster, err)
	}
	views := make([]binding.View, 0, len(rbs.Items)+len(crbs.Items))
	for i := range rbs.Items {
		views = append(views, binding.ViewOf(&rbs.Items[i]))
	}
	for i := range crbs.Items {
		views = append(views, binding.ClusterViewOf(&crbs.Items[i]))
	}
	return views, nil
}

// evict records the eviction in the binding: one update. A conflict (the
// binding changed since it was read) is reported, for another pass with
// the binding as it is then.
func (r *Reconciler) evict(ctx context.Context, v binding.View, cluster string) (conflict bool, err error) {
	task := eviction.Task{
		Producer:  workv1alpha2.EvictionProducerTaintManager,
		Reason:    workv1alpha2.EvictionReasonTaintUntolerated,
		PurgeMode: r.purgeMode(v.Spec.Failover),
	}
	if f := v.Spec.Failover; r.PreserveState && f != nil && f.Cluster != nil && f.Cluster.StatePreservation != nil {
		state, err := eviction.PreservedState(f.Cluster.StatePreservation.Rules, v.Status.AggregatedStatus, cluster)
		if err != nil {
			return false, r.recordFailure(v, cluster, fmt.Errorf("spec.failover.cluster.statePreservation: %w", err))
		}
		task.PreservedLabelState = state
	}
	var changed bool
	if r.Graceful {
		changed = eviction.Evict(v.Spec, cluster, task, metav1.NewTime(r.Now()))
	} else {
		changed = eviction.Remove(v.Spec, cluster)
	}
	if !changed {
		return false, nil
	}
	if err := r.Client.Update(ctx, v.Object); err != nil {
		switch {
		case apierrors.IsConflict(err):
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		}
		return false, r.recordFailure(v, cluster, err)
	}
	ctrl.LoggerFrom(ctx).Info("Evicted workload from cluster", "binding", client.ObjectKeyFromObject(v.Object), "kind", v.Kind())
	if r.Graceful {
		// The graceful eviction controller reports it when the copy goes.
		return false, nil
	}
	for _, o := range []client.Object{v.Object, eviction.Template(v.Spec)} {
		r.Recorder.Eventf(o, nil, corev1.EventTypeNormal, flotillaevents.ReasonEvictWorkloadSucceed, actionEvict,
			"Evict from cluster %s succeed.", cluster)
	}
	return false, nil
}

func (r *Reconciler) recordFailure(v binding.View, cluster string, err error) error {
	for _, o := range []client.Object{v.Object, eviction.Template(v.Spec)} {
		r.Recorder.Eventf(o, nil, corev1.EventTypeWarning, flotillaevents.ReasonEvictWorkloadFailed, actionEvict,
			"Evict from cluster %s failed: %v", cluster, err)
	}
	return fmt.Errorf("evicting %s %s from %s: %w", v.Kind(), client.ObjectKeyFromObject(v.Object), cluster, err)
}

// purgeMode is the policy's failover.cluster.purgeMode (Gracefully when
// the policy has the section but leaves it unset), else the flag's.
func (r *Reconciler) purgeMode(f *policyv1alpha1.FailoverBehavior) policyv1alpha1.PurgeMode {
	if f != nil && f.Cluster != nil {
		if f.Cluster.PurgeMode == "" {
			return policyv1alpha1.PurgeModeGracefully
		}
		return f.Cluster.PurgeMode
	}
	return r.PurgeMode
}

func noExecute(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}
