// Package applicationfailover is Karmada's application failover
// controllers: a workload that stays unhealthy in a cluster longer than
// its policy's failover.application tolerates is evicted from it, and the
// scheduler places it elsewhere.
package applicationfailover

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/eviction"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

// Karmada's names for the two controllers, also the producers of their
// eviction tasks.
const (
	ResourceBindingControllerName        = "resource-binding-application-failover-controller"
	ClusterResourceBindingControllerName = "cluster-resource-binding-application-failover-controller"
)

const actionEvict = "Evict"

// Hooks says which interpreter operations a kind has.
type Hooks interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconciler watches the health the members report for one kind of binding
// and evicts it from the clusters where it stays unhealthy.
type Reconciler struct {
	Client      client.Client
	Recorder    events.EventRecorder
	Interpreter Hooks
	// Graceful is the GracefulEviction gate: purge mode Gracefully needs it.
	Graceful bool
	// PreserveState carries failover.application.statePreservation
	// (StatefulFailoverInjection).
	PreserveState           bool
	MaxConcurrentReconciles int
	// Now is time.Now when nil.
	Now func() time.Time

	name      string
	clustered bool
	unhealthy unhealthySince
}

// SetupWithManager registers the controller for ResourceBindings.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.name = ResourceBindingControllerName
	return r.setup(mgr, &workv1alpha2.ResourceBinding{})
}

// SetupClusterWithManager registers the controller for
// ClusterResourceBindings.
func (r *Reconciler) SetupClusterWithManager(mgr ctrl.Manager) error {
	r.name, r.clustered = ClusterResourceBindingControllerName, true
	return r.setup(mgr, &workv1alpha2.ClusterResourceBinding{})
}

func (r *Reconciler) setup(mgr ctrl.Manager, obj client.Object) error {
	if r.Client == nil || r.Recorder == nil || r.Interpreter == nil {
		return errors.New("application failover controller: Client, Recorder and Interpreter are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	r.unhealthy = unhealthySince{m: map[types.NamespacedName]map[string]time.Time{}}
	withFailover := predicate.NewPredicateFuncs(func(o client.Object) bool {
		v, ok := binding.AsView(o)
		return ok && v.Spec.Failover != nil && v.Spec.Failover.Application != nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.name).
		For(obj, builder.WithPredicates(withFailover)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

// Reconcile times how long the workload has been unhealthy in each cluster,
// evicts it from those past the toleration in one write, and comes back
// when the next toleration runs out.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := binding.NewObject(r.clustered)
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.unhealthy.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	v, _ := binding.AsView(obj)
	if !r.applies(v) {
		r.unhealthy.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	app := v.Spec.Failover.Application
	toleration := 300 * time.Second
	if s := app.DecisionConditions.TolerationSeconds; s != nil {
		toleration = time.Duration(*s) * time.Second
	}
	now := r.Now()
	due, wait := r.unhealthy.observe(req.NamespacedName, v.Spec, v.Status.AggregatedStatus, now, toleration)
	if len(due) == 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}

	var errs []error
	evicted := false
	for _, cluster := range due {
		task, err := r.task(app, v.Status.AggregatedStatus, cluster)
		if err != nil {
			errs = append(errs, err)
			r.event(v, corev1.EventTypeWarning, flotillaevents.ReasonEvictWorkloadFailed, "Evict from cluster %s failed: %v", cluster, err)
			continue
		}
		evicted = eviction.Evict(v.Spec, cluster, task, metav1.NewTime(now)) || evicted
	}
	if evicted {
		if err := r.Client.Update(ctx, obj); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: eviction.ConflictRetry}, nil
			}
			for _, cluster := range due {
				r.event(v, corev1.EventTypeWarning, flotillaevents.ReasonEvictWorkloadFailed, "Evict from cluster %s failed: %v", cluster, err)
			}
			return ctrl.Result{}, fmt.Errorf("evicting %s %s: %w", v.Kind(), req.NamespacedName, err)
		}
		ctrl.LoggerFrom(ctx).Info("Evicted an unhealthy application", "clusters", due)
		for _, cluster := range due {
			r.unhealthy.drop(req.NamespacedName, cluster)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// applies is Karmada's filter: application failover needs the policy
// section, reported statuses, a health interpretation of the kind, and
// propagateDeps (the dependencies must follow the workload).
func (r *Reconciler) applies(v binding.View) bool {
	if v.Spec.Failover == nil || v.Spec.Failover.Application == nil || len(v.Status.AggregatedStatus) == 0 || !v.Spec.PropagateDeps {
		return false
	}
	gvk := schema.FromAPIVersionAndKind(v.Spec.Resource.APIVersion, v.Spec.Resource.Kind)
	return r.Interpreter.HookEnabled(gvk, configv1alpha1.InterpreterOperationInterpretHealth)
}

// task describes the eviction the policy asks for.
func (r *Reconciler) task(app *policyv1alpha1.ApplicationFailoverBehavior, items []workv1alpha2.AggregatedStatusItem, cluster string) (eviction.Task, error) {
	t := eviction.Task{Producer: r.name, Reason: workv1alpha2.EvictionReasonApplicationFailure, PurgeMode: app.PurgeMode}
	if t.PurgeMode == "" {
		t.PurgeMode = policyv1alpha1.PurgeModeGracefully
	}
	if r.PreserveState && app.StatePreservation != nil {
		state, err := eviction.PreservedState(app.StatePreservation.Rules, items, cluster)
		if err != nil {
			return t, fmt.Errorf("spec.failover.application.statePreservation: %w", err)
		}
		t.PreservedLabelState = state
	}
	switch t.PurgeMode {
	case policyv1alpha1.PurgeModeGracefully:
		if !r.Graceful {
			return t, errors.New("spec.failover.application.purgeMode Gracefully needs the GracefulEviction feature gate")
		}
		t.GracePeriodSeconds = app.GracePeriodSeconds
	case policyv1alpha1.PurgeModeNever:
		// Kept until a user sets suppressDeletion to false.
		t.SuppressDeletion = ptr.To(true)
	}
	return t, nil
}

// event records on the binding and its template.
func (r *Reconciler) event(v binding.View, eventType, reason, format string, args ...any) {
	for _, o := range []client.Object{v.Object, eviction.Template(v.Spec)} {
		r.Recorder.Eventf(o, nil, eventType, reason, actionEvict, format, args...)
	}
}

// unhealthySince remembers, per binding and cluster, since when the
// workload has been seen unhealthy. It lives in memory, as Karmada's: a
// restarted controller starts the toleration over.
type unhealthySince struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]time.Time
}

// observe updates the record from the aggregated statuses and returns the
// clusters where the toleration has run out, and how long until the next
// one does (zero: none is counting). Healthy clusters start over; Unknown
// ones keep their time (a status not collected yet says nothing); clusters
// no longer scheduled, or being evicted, are dropped.
func (u *unhealthySince) observe(key types.NamespacedName, spec *workv1alpha2.ResourceBindingSpec, items []workv1alpha2.AggregatedStatusItem,
	now time.Time, toleration time.Duration) (due []string, wait time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	since := u.m[key]
	if since == nil {
		since = map[string]time.Time{}
	}
	scheduled := map[string]bool{}
	for _, c := range spec.Clusters {
		scheduled[c.Name] = true
	}
	for cluster := range since {
		if !scheduled[cluster] || eviction.Evicting(spec, cluster) {
			delete(since, cluster)
		}
	}
	for _, item := range items {
		c := item.ClusterName
		if !scheduled[c] || eviction.Evicting(spec, c) {
			continue
		}
		switch item.Health {
		case workv1alpha2.ResourceHealthy:
			delete(since, c)
		case workv1alpha2.ResourceUnhealthy:
			first, ok := since[c]
			if !ok {
				first = now
				since[c] = now
			}
			left := first.Add(toleration).Sub(now)
			if left <= 0 {
				due = append(due, c)
				continue
			}
			if wait == 0 || left < wait {
				wait = left
			}
		}
	}
	if len(since) == 0 {
		delete(u.m, key)
	} else {
		u.m[key] = since
	}
	return due, wait
}

func (u *unhealthySince) drop(key types.NamespacedName, cluster string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.m[key], cluster)
}

func (u *unhealthySince) forget(key types.NamespacedName) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.m, key)
}
