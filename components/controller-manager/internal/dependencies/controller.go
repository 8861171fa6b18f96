package dependencies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// ControllerName is the distributor's name, as Karmada's; it names the
// events' reporting controller too.
const ControllerName = "dependencies-distributor"

// Indexes of ResourceBindings in the manager's cache.
const (
	// DependedByIndex indexes attached bindings by their depended-by label
	// keys, so a dependent binding finds its attached bindings.
	DependedByIndex = "flotilla.io/depended-by"
	// DependencyIndex indexes dependent bindings by the dependencies their
	// annotation names, as "<group>/<kind>/<namespace>/<name>" (name "*" for
	// a label selector), so a dependency's change finds its dependents.
	DependencyIndex = "flotilla.io/dependency"
)

// watchedKinds are the kinds of dependencies whose appearance, change or
// removal requeues their dependents. They are watched as metadata only.
var watchedKinds = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	corev1.SchemeGroupVersion.WithKind("Secret"),
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
	// A ServiceImport's: its derived Service and the EndpointSlices
	// collected from exporting clusters, which come and go with pods.
	corev1.SchemeGroupVersion.WithKind("Service"),
	discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"),
}

// Reconciler distributes the dependencies of ResourceBindings with
// propagateDeps. Set the exported fields, then call SetupWithManager.
type Reconciler struct {
	// Client reads bindings and dependencies (metadata) through the
	// manager's cache, and writes bindings.
	Client client.Client
	// Templates reads the dependent bindings' templates.
	Templates binding.TemplateReader
	// Interpreter names the dependencies of a template.
	Interpreter interpreter.Interpreter
	// Recorder records events on templates and bindings.
	Recorder events.EventRecorder
	// MaxConcurrentReconciles bounds the dependent bindings synced at once.
	// Default: 5.
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.karmada.io,resources=clusterresourcebindings,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=clusterresourcebindings/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;persistentvolumeclaims;serviceaccounts;services,verbs=get;list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager registers the indexes and the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Templates.API == nil || r.Interpreter == nil || r.Recorder == nil {
		return errors.New("dependencies distributor: Client, Templates.API, Interpreter and Recorder are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	ctx := context.Background()
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &workv1alpha2.ResourceBinding{}, DependedByIndex, func(o client.Object) []string {
		return dependedByKeys(o.GetLabels())
	}); err != nil {
		return fmt.Errorf("indexing bindings by dependent: %w", err)
	}
	dependencyIndex := func(o client.Object) []string {
		return dependencyKeys(o.GetNamespace(), o.GetAnnotations()[workv1alpha2.BindingDependenciesAnnotationKey])
	}
	for _, obj := range []client.Object{&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		if err := indexer.IndexField(ctx, obj, DependencyIndex, dependencyIndex); err != nil {
			return fmt.Errorf("indexing %T by dependency: %w", obj, err)
		}
	}

	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha2.ResourceBinding{}, builder.WithPredicates(dependentChanged())).
		// Cluster-scoped templates with propagateDeps: their requests have
		// no namespace.
		Watches(&workv1alpha2.ClusterResourceBinding{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(dependentChanged())).
		// An attached binding deleted behind the distributor's back (or by
		// the garbage collector, its dependency recreated) is made again.
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(requiringBindings), builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles})
	for _, gvk := range watchedKinds {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		b = b.Watches(obj, handler.EnqueueRequestsFromMapFunc(r.dependentsOf(gvk.GroupKind())), builder.OnlyMetadata)
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up %s: %w", ControllerName, err)
	}
	return nil
}

// newDependent returns an empty dependent binding: a ResourceBinding in a
// namespace, a ClusterResourceBinding without.
func newDependent(namespace string) client.Object {
	if namespace == "" {
		return &workv1alpha2.ClusterResourceBinding{}
	}
	return &workv1alpha2.ResourceBinding{}
}

// bindingParts gives access to what both binding kinds share.
func bindingParts(obj client.Object) (*metav1.ObjectMeta, *workv1alpha2.ResourceBindingSpec) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return &b.ObjectMeta, &b.Spec
	case *workv1alpha2.ClusterResourceBinding:
		return &b.ObjectMeta, &b.Spec
	}
	panic(fmt.Sprintf("not a binding: %T", obj))
}

// dependentChanged keeps the binding events that may change its attached
// bindings: propagateDeps, the schedule, its settings (all in the spec,
// hence the generation), its id label, its claim (a released binding's
// settings count no more) and its deletion.
func dependentChanged() predicate.Funcs {
	relevant := func(o client.Object) bool {
		switch o.(type) {
		case *workv1alpha2.ResourceBinding, *workv1alpha2.ClusterResourceBinding:
		default:
			return false
		}
		_, spec := bindingParts(o)
		return spec.PropagateDeps || controllerutil.ContainsFinalizer(o, workv1alpha2.BindingDependenciesDistributorFinalizer)
	}
	labelChanged := func(o, n client.Object, keys ...string) bool {
		for _, k := range keys {
			if o.GetLabels()[k] != n.GetLabels()[k] {
				return true
			}
		}
		return false
	}
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return relevant(e.Object) },
		// Deleted without the finalizer (propagateDeps set and the binding
		// gone before the first sync): its entries are removed by name.
		DeleteFunc: func(e event.DeleteEvent) bool { return relevant(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			if !relevant(e.ObjectOld) && !relevant(e.ObjectNew) {
				return false
			}
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				labelChanged(e.ObjectOld, e.ObjectNew, workv1alpha2.ResourceBindingPermanentIDLabel, workv1alpha2.ClusterResourceBindingPermanentIDLabel,
					policyv1alpha1.PropagationPolicyPermanentIDLabel, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel) ||
				!e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
		},
		GenericFunc: func(e event.GenericEvent) bool { return relevant(e.Object) },
	}
}

// requiringBindings maps an attached binding to the bindings it is
// required by (ClusterResourceBindings without a namespace).
func requiringBindings(_ context.Context, o client.Object) []reconcile.Request {
	rb, ok := o.(*workv1alpha2.ResourceBinding)
	if !ok {
		return nil
	}
	out := make([]reconcile.Request, 0, len(rb.Spec.RequiredBy))
	for _, s := range rb.Spec.RequiredBy {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: s.Namespace, Name: s.Name}})
	}
	return out
}

// dependentsOf maps an object of kind gk to the bindings (of both kinds)
// whose dependencies name it, or select objects of its kind in its
// namespace.
func (r *Reconciler) dependentsOf(gk schema.GroupKind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var out []reconcile.Request
		seen := map[client.ObjectKey]bool{}
		add := func(k client.ObjectKey) {
			if !seen[k] {
				seen[k] = true
				out = append(out, reconcile.Request{NamespacedName: k})
			}
		}
		for _, key := range []string{dependencyKey(gk, o.GetNamespace(), o.GetName()), dependencyKey(gk, o.GetNamespace(), "*")} {
			var rbs workv1alpha2.ResourceBindingList
			if err := r.Client.List(ctx, &rbs, client.MatchingFields{DependencyIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing the bindings depending on an object", "key", key)
			}
			for i := range rbs.Items {
				add(client.ObjectKeyFromObject(&rbs.Items[i]))
			}
			var crbs workv1alpha2.ClusterResourceBindingList
			if err := r.Client.List(ctx, &crbs, client.MatchingFields{DependencyIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing the cluster bindings depending on an object", "key", key)
			}
			for i := range crbs.Items {
				add(client.ObjectKeyFromObject(&crbs.Items[i]))
			}
		}
		return out
	}
}

// dependencyKey is the DependencyIndex value of one dependency.
func dependencyKey(gk schema.GroupKind, namespace, name string) string {
	return gk.Group + "/" + gk.Kind + "/" + namespace + "/" + name
}

// dependencyKeys are the DependencyIndex values of a binding in namespace
// with the dependencies annotation raw. A malformed annotation indexes
// nothing; the next sync rewrites it.
func dependencyKeys(namespace, raw string) []string {
	if raw == "" {
		return nil
	}
	var deps []configv1alpha1.DependentObjectReference
	if err := json.Unmarshal([]byte(raw), &deps); err != nil {
		return nil
	}
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		gk := schema.FromAPIVersionAndKind(d.APIVersion, d.Kind).GroupKind()
		ns := d.Namespace
		if ns == "" {
			ns = namespace
		}
		name := d.Name
		if name == "" {
			name = "*"
		}
		out = append(out, dependencyKey(gk, ns, name))
	}
	return out
}
