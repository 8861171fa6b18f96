// Package gracefuleviction is Karmada's graceful eviction controllers: they
// end the graceful eviction tasks of ResourceBindings and
// ClusterResourceBindings once the evicted copy may go, which lets the
// binding controller delete its Work.
package gracefuleviction

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/eviction"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

// Karmada's names for the two controllers.
const (
	ResourceBindingControllerName        = "resource-binding-graceful-eviction-controller"
	ClusterResourceBindingControllerName = "cluster-resource-binding-graceful-eviction-controller"
)

const actionEvict = "Evict"

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconciler ends the eviction tasks of one kind of binding.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Timeout is how long an evicted copy is kept when its task sets no
	// grace period (--graceful-eviction-timeout).
	Timeout                 time.Duration
	MaxConcurrentReconciles int
	// Now is time.Now when nil.
	Now func() time.Time

	clustered bool
}

// SetupWithManager registers the controller for ResourceBindings.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.setup(mgr, ResourceBindingControllerName, &workv1alpha2.ResourceBinding{})
}

// SetupClusterWithManager registers the controller for
// ClusterResourceBindings.
func (r *Reconciler) SetupClusterWithManager(mgr ctrl.Manager) error {
	r.clustered = true
	return r.setup(mgr, ClusterResourceBindingControllerName, &workv1alpha2.ClusterResourceBinding{})
}

func (r *Reconciler) setup(mgr ctrl.Manager, name string, obj client.Object) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("graceful eviction controller: Client and Recorder are required")
	}
	if r.Timeout <= 0 {
		r.Timeout = eviction.DefaultTimeout
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	// Only bindings being evicted from somewhere; their status (the
	// replacement's health) and spec (the new schedule) move the tasks.
	evicting := predicate.NewPredicateFuncs(func(o client.Object) bool {
		v, ok := binding.AsView(o)
		return ok && len(v.Spec.GracefulEvictionTasks) > 0
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(obj, builder.WithPredicates(evicting, predicate.Funcs{DeleteFunc: func(event.DeleteEvent) bool { return false }})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

// Reconcile assesses the binding's tasks once the scheduler has placed it
// for its current spec, writes the tasks that remain, and comes back when
// the first of them times out.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := binding.NewObject(r.clustered)
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	v, _ := binding.AsView(obj)
	if !obj.GetDeletionTimestamp().IsZero() || len(v.Spec.GracefulEvictionTasks) == 0 {
		return ctrl.Result{}, nil
	}
	if v.Status.SchedulerObservedGeneration != obj.GetGeneration() {
		// The replacement is not placed yet; the scheduler's status write
		// brings the binding back.
		return ctrl.Result{}, nil
	}

	a := eviction.Assess(v.Spec, v.Status, r.Now(), r.Timeout)
	if !a.Changed(v.Spec.GracefulEvictionTasks) {
		return ctrl.Result{RequeueAfter: a.RecheckAfter}, nil
	}
	v.Spec.GracefulEvictionTasks = a.Tasks
	if err := r.Client.Update(ctx, obj); err != nil {
		switch {
		case apierrors.IsConflict(err):
			return ctrl.Result{RequeueAfter: eviction.ConflictRetry}, nil
		case apierrors.IsNotFound(err):
			return ctrl.Result{}, nil
		}
		for _, cluster := range a.Done {
			r.event(v, corev1.EventTypeWarning, flotillaevents.ReasonEvictWorkloadFailed, "Evict from cluster %s failed: %v", cluster, err)
		}
		return ctrl.Result{}, fmt.Errorf("ending eviction tasks of %s %s: %w", v.Kind(), req.NamespacedName, err)
	}
	for _, cluster := range a.Done {
		ctrl.LoggerFrom(ctx).Info("Evicted copy may go", "cluster", cluster)
		r.event(v, corev1.EventTypeNormal, flotillaevents.ReasonEvictWorkloadSucceed, "Evict from cluster %s succeed.", cluster)
	}
	return ctrl.Result{RequeueAfter: a.RecheckAfter}, nil
}

// event records on the binding and its template.
func (r *Reconciler) event(v binding.View, eventType, reason, format string, args ...any) {
	for _, o := range []client.Object{v.Object, eviction.Template(v.Spec)} {
		r.Recorder.Eventf(o, nil, eventType, reason, actionEvict, format, args...)
	}
}
