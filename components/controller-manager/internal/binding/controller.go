package binding

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// Controller names, as Karmada's; they name the events' reporting
// controller too.
const (
	ControllerName        = "binding-controller"
	ClusterControllerName = "cluster-resource-binding-controller"
)

// WorkBindingIndex indexes Works by the binding they belong to, as
// "<binding id label>=<id>", so a binding finds its Works in the cache
// without scanning every Work.
const WorkBindingIndex = "flotilla.io/work-binding"

// Reconciler turns bindings into Works. Set the exported fields, then call
// SetupWithManager, which registers one controller for ResourceBindings and
// one for ClusterResourceBindings.
type Reconciler struct {
	// Client reads bindings, Works, Clusters and override policies through
	// the manager's cache, and writes.
	Client client.Client
	// Templates reads the bindings' resource templates.
	Templates TemplateReader
	// Interpreter revises replicas.
	Interpreter interpreter.Interpreter
	// Recorder records events on bindings and templates.
	Recorder events.EventRecorder
	// MaxConcurrentReconciles bounds the bindings of each kind synced at
	// once. Default: 5.
	MaxConcurrentReconciles int
	// InjectPreservedState puts the state a failover preserved into the
	// labels of the workload's new copy (StatefulFailoverInjection).
	InjectPreservedState bool

	// released holds the UIDs of deleting bindings whose finalizer this
	// controller removed, for as long as the cache may still show them
	// with it (see reconcileDelete).
	released *cache.Expiring
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings/finalizers;clusterresourcebindings/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy.karmada.io,resources=overridepolicies;clusteroverridepolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager registers the Work index and both controllers.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Templates.API == nil || r.Interpreter == nil || r.Recorder == nil {
		return errors.New("binding controller: Client, Templates.API, Interpreter and Recorder are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	r.released = cache.NewExpiring()
	if err := IndexWorksByBinding(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	opts := controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}
	bindingChanged := builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return bindingChanged(e.ObjectOld, e.ObjectNew)
	}})
	workChanged := builder.WithPredicates(predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(e event.UpdateEvent) bool { return workChanged(e.ObjectOld, e.ObjectNew) },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})

	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha2.ResourceBinding{}, bindingChanged).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(resourceBindingOfWork), workChanged).
		Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.resourceBindingsForPolicy)).
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.resourceBindingsForPolicy)).
		WithOptions(opts).
		Complete(reconcile.Func(r.reconcileResourceBinding))
	if err != nil {
		return fmt.Errorf("setting up %s: %w", ControllerName, err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(ClusterControllerName).
		For(&workv1alpha2.ClusterResourceBinding{}, bindingChanged).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(clusterResourceBindingOfWork), workChanged).
		Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.clusterResourceBindingsForPolicy)).
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.clusterResourceBindingsForPolicy)).
		WithOptions(opts).
		Complete(reconcile.Func(r.reconcileClusterResourceBinding))
	if err != nil {
		return fmt.Errorf("setting up %s: %w", ClusterControllerName, err)
	}
	return nil
}

// IndexWorksByBinding registers WorkBindingIndex with the manager's cache.
func IndexWorksByBinding(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &workv1alpha1.Work{}, WorkBindingIndex, func(obj client.Object) []string {
		return workBindingKeys(obj.GetLabels())
	})
	if err != nil {
		return fmt.Errorf("indexing Works by binding: %w", err)
	}
	return nil
}

// workBindingKeys are the index keys of a Work with these labels.
func workBindingKeys(labels map[string]string) []string {
	var keys []string
	for _, l := range bindingLabelKeys() {
		if id, ok := labels[l]; ok && id != "" {
			keys = append(keys, l+"="+id)
		}
	}
	return keys
}

// bindingChanged filters binding updates down to those that change the
// Works: the spec (generation), the id label, deletion and finalizers.
// Status updates, frequent and written by the scheduler and the binding
// status controller, are skipped.
func bindingChanged(oldObj, newObj client.Object) bool {
	return oldObj.GetGeneration() != newObj.GetGeneration() ||
		!equality.Semantic.DeepEqual(oldObj.GetLabels(), newObj.GetLabels()) ||
		!oldObj.GetDeletionTimestamp().Equal(newObj.GetDeletionTimestamp()) ||
		!equality.Semantic.DeepEqual(oldObj.GetFinalizers(), newObj.GetFinalizers())
}

// workChanged keeps Work updates that may need a rewrite: the spec, labels
// or annotations changed behind our back, or the Work is being deleted
// (its deletion event then brings it back). Status updates are skipped.
func workChanged(oldObj, newObj client.Object) bool {
	return oldObj.GetGeneration() != newObj.GetGeneration() ||
		!equality.Semantic.DeepEqual(oldObj.GetLabels(), newObj.GetLabels()) ||
		!equality.Semantic.DeepEqual(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
		!oldObj.GetDeletionTimestamp().Equal(newObj.GetDeletionTimestamp())
}

// resourceBindingOfWork maps a Work to the ResourceBinding named on it.
func resourceBindingOfWork(_ context.Context, obj client.Object) []reconcile.Request {
	a := obj.GetAnnotations()
	ns, name := a[workv1alpha2.ResourceBindingNamespaceAnnotationKey], a[workv1alpha2.ResourceBindingNameAnnotationKey]
	if ns == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
}

// clusterResourceBindingOfWork maps a Work to the ClusterResourceBinding
// named on it.
func clusterResourceBindingOfWork(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetAnnotations()[workv1alpha2.ClusterResourceBindingAnnotationKey]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
}
