// Package namespace is the namespace sync controller: every namespace of the
// control plane exists in every member, so that namespaced templates can be
// propagated there, except the control plane's reserved namespaces, default,
// names matching the skip list, namespaces labelled
// namespace.karmada.io/skip-auto-propagation=true, and namespaces a
// ClusterPropagationPolicy claimed, which their binding carries instead.
//
// As in Karmada, a namespace travels in one Work per Cluster, in the
// cluster's execution namespace, named as a ClusterResourceBinding's Work
// for the namespace would be; ClusterOverridePolicies that select it apply
// per cluster. The execution controller (or a Pull member's agent) applies
// it and deletes the member namespace when the Work goes. The manifest's
// conflict resolution is abort unless the namespace asks for overwrite, so
// a namespace a member had before is reported as a conflict and left alone,
// never taken over and so never deleted.
//
// Reconciling is level-based: the Works a namespace should have are
// recomputed from it and the Clusters, and this controller's Works of it
// (labelled ManagedByLabel) that are not wanted any more are deleted: the
// namespace is gone, opted out, matches the skip list, or its cluster went.
// A namespace being deleted keeps its Works until it is gone, as in
// Karmada, so that the member namespace outlives the Works of the templates
// it held. Works of a namespace a policy claimed are released instead: the
// binding writes Works of the same names and takes them over in place. Each
// Work is owned by its namespace, so the garbage collector removes it too
// should the namespace go while this controller is down.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/overrides"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// ControllerName names the controller and its events.
const ControllerName = "namespace-sync-controller"

// ManagedByLabel, with value ControllerName, marks the Works this
// controller writes, so that it finds them again.
const ManagedByLabel = "work.flotilla.io/managed-by"

// WorkNameIndex indexes this controller's Works by name: a namespace's
// Works share one name across execution namespaces.
const WorkNameIndex = "flotilla.io/namespace-work-name"

// actionApplyOverride is the events' action (events.k8s.io/v1 requires one).
const actionApplyOverride = "ApplyOverridePolicy"

// conflictRetry requeues after a write lost a race with another writer.
const conflictRetry = 200 * time.Millisecond

// Reconciler propagates namespaces through Works. Set the exported fields,
// then call SetupWithManager.
type Reconciler struct {
	// Client reads namespaces, Clusters, Works and ClusterOverridePolicies
	// through the manager's cache, and writes Works.
	Client client.Client
	// Recorder records override events on namespaces.
	Recorder events.EventRecorder
	// SkippedNamespaces are never propagated when their name matches one of
	// these (Karmada's --skipped-propagating-namespaces).
	SkippedNamespaces []*regexp.Regexp
	// MaxConcurrentReconciles bounds the namespaces synced at once.
	// Default: 5.
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy.karmada.io,resources=clusteroverridepolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager registers the Work index and the controller. Besides
// namespaces it watches Clusters (a new one gets every namespace; a change
// of labels may change which overrides apply), execution namespaces (Works
// can only be written once a cluster's exists), this controller's Works
// (one changed or deleted behind its back is restored, and one left from
// an earlier run is judged again) and ClusterOverridePolicies.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("namespace sync controller: Client and Recorder are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	if err := IndexWorks(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	namespaceMeta := &metav1.PartialObjectMetadata{}
	namespaceMeta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(namespaceKind))
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&corev1.Namespace{}, builder.OnlyMetadata, builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return namespaceChanged(e.ObjectOld, e.ObjectNew)
		}})).
		Watches(namespaceMeta, handler.EnqueueRequestsFromMapFunc(r.allNamespaces), builder.OnlyMetadata, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(e event.CreateEvent) bool { return isExecutionSpace(e.Object) },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allNamespaces), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return clusterChanged(e.ObjectOld, e.ObjectNew) },
			// The cluster controller removes a deleted Cluster's Works.
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(namespaceOfWorkRequest), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(e event.CreateEvent) bool { return ours(e.Object) },
			UpdateFunc: func(e event.UpdateEvent) bool {
				return (ours(e.ObjectOld) || ours(e.ObjectNew)) && workChanged(e.ObjectOld, e.ObjectNew)
			},
			DeleteFunc:  func(e event.DeleteEvent) bool { return ours(e.Object) },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.namespacesOfPolicy)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

// IndexWorks registers WorkNameIndex with the manager's cache.
func IndexWorks(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &workv1alpha1.Work{}, WorkNameIndex, func(obj client.Object) []string {
		if !ours(obj) {
			return nil
		}
		return []string{obj.GetName()}
	})
	if err != nil {
		return fmt.Errorf("indexing namespace Works: %w", err)
	}
	return nil
}

// ours: the Work carries this controller's label.
func ours(obj client.Object) bool {
	return obj.GetLabels()[ManagedByLabel] == ControllerName
}

// namespaceChanged: what is propagated is the labels and annotations, and
// the deletion.
func namespaceChanged(oldObj, newObj client.Object) bool {
	return !maps.Equal(oldObj.GetLabels(), newObj.GetLabels()) ||
		!maps.Equal(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
		!oldObj.GetDeletionTimestamp().Equal(newObj.GetDeletionTimestamp())
}

func isExecutionSpace(obj client.Object) bool {
	_, ok := names.ClusterOfExecutionSpace(obj.GetName())
	return ok
}

// clusterChanged: a Cluster's labels and spec (provider, region, zone) are
// what ClusterOverridePolicies target. Status changes, frequent, are not.
func clusterChanged(oldObj, newObj client.Object) bool {
	return oldObj.GetGeneration() != newObj.GetGeneration() || !maps.Equal(oldObj.GetLabels(), newObj.GetLabels())
}

// workChanged: a Work update that may need a rewrite: spec, labels,
// annotations or owners changed, or it is being deleted. Status writes are
// not.
func workChanged(oldObj, newObj client.Object) bool {
	return oldObj.GetGeneration() != newObj.GetGeneration() ||
		!maps.Equal(oldObj.GetLabels(), newObj.GetLabels()) ||
		!maps.Equal(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
		len(oldObj.GetOwnerReferences()) != len(newObj.GetOwnerReferences()) ||
		!oldObj.GetDeletionTimestamp().Equal(newObj.GetDeletionTimestamp())
}

func namespaceOfWorkRequest(_ context.Context, obj client.Object) []reconcile.Request {
	ns, ok := namespaceOfWork(obj.GetName())
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: ns}}}
}

// allNamespaces maps to every namespace of the control plane that may be
// propagated.
func (r *Reconciler) allNamespaces(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing namespaces to sync")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, ns := range list.Items {
		if propagatable(ns.Name, r.SkippedNamespaces) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: ns.Name}})
		}
	}
	return reqs
}

// namespacesOfPolicy maps a ClusterOverridePolicy, before and after a change
// (the handler is called with both), to the namespaces it may select.
func (r *Reconciler) namespacesOfPolicy(ctx context.Context, obj client.Object) []reconcile.Request {
	cop, ok := obj.(*policyv1alpha1.ClusterOverridePolicy)
	if !ok {
		return nil
	}
	named, all := selectedNamespaces(cop.Spec.ResourceSelectors)
	if all {
		return r.allNamespaces(ctx, obj)
	}
	reqs := make([]reconcile.Request, 0, len(named))
	for _, n := range named {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: n}})
	}
	return reqs
}

// selectedNamespaces tells which namespaces resource selectors may select:
// those named, or all of them (no selectors, or a Namespace selector by
// labels or by kind alone).
func selectedNamespaces(selectors []policyv1alpha1.ResourceSelector) (named []string, all bool) {
	if len(selectors) == 0 {
		return nil, true
	}
	for _, s := range selectors {
		if s.APIVersion != corev1.SchemeGroupVersion.String() || s.Kind != namespaceKind {
			continue
		}
		if s.Name == "" {
			return nil, true
		}
		named = append(named, s.Name)
	}
	return named, false
}

// Reconcile brings the Works of one namespace in line with it and the
// Clusters.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns, err := r.namespace(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	var obj metav1.Object
	if ns != nil {
		// A nil *PartialObjectMetadata would be a non-nil metav1.Object.
		obj = ns
	}
	p := decide(req.Name, obj, r.SkippedNamespaces)
	if p.hold {
		return ctrl.Result{}, nil
	}
	var targets []*clusterv1alpha1.Cluster
	if p.propagate {
		var clusters clusterv1alpha1.ClusterList
		if err := r.Client.List(ctx, &clusters); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing Clusters: %w", err)
		}
		targets = targetClusters(clusters.Items)
	}

	var existing workv1alpha1.WorkList
	if err := r.Client.List(ctx, &existing, client.MatchingFields{WorkNameIndex: workName(req.Name)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing Works: %w", err)
	}
	for i := range existing.Items {
		if err := workcache.Expand(&existing.Items[i]); err != nil {
			return ctrl.Result{}, err
		}
	}
	del, release := unwanted(existing.Items, clusterNames(targets), p)
	var errs []error
	for _, w := range del {
		errs = append(errs, r.deleteWork(ctx, w))
	}
	for _, w := range release {
		errs = append(errs, r.releaseWork(ctx, w))
	}
	if len(targets) > 0 {
		errs = append(errs, r.sync(ctx, ns, targets))
	}
	return requeueOnConflict(ctx, errors.Join(errs...))
}

// namespace reads the namespace's metadata, nil when it does not exist.
func (r *Reconciler) namespace(ctx context.Context, name string) (*metav1.PartialObjectMetadata, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(namespaceKind))
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting namespace %s: %w", name, err)
	}
	return ns, nil
}

// sync writes the namespace's Work in every target cluster. An override
// policy that fails for a cluster is the user's to fix: it is reported on
// the namespace, that cluster's Work is left as it was, and nothing is
// retried until a policy changes.
func (r *Reconciler) sync(ctx context.Context, ns *metav1.PartialObjectMetadata, targets []*clusterv1alpha1.Cluster) error {
	var cops policyv1alpha1.ClusterOverridePolicyList
	if err := r.Client.List(ctx, &cops); err != nil {
		return fmt.Errorf("listing ClusterOverridePolicies: %w", err)
	}
	renderer := overrides.NewRenderer(nil, cops.Items)
	base := namespaceManifest(ns)
	var errs []error
	for _, c := range targets {
		if err := r.syncCluster(ctx, ns, base, renderer, c); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", c.Name, err))
		}
	}
	return errors.Join(errs...)
}

// syncCluster renders and writes the namespace's Work for one cluster.
func (r *Reconciler) syncCluster(ctx context.Context, ns *metav1.PartialObjectMetadata, base *unstructured.Unstructured,
	renderer *overrides.Renderer, cluster *clusterv1alpha1.Cluster,
) error {
	key := client.ObjectKey{Namespace: names.ExecutionSpace(cluster.Name), Name: workName(ns.Name)}
	existing := &workv1alpha1.Work{}
	found := true
	if err := r.Client.Get(ctx, key, existing); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading Work %s: %w", key, err)
		}
		found = false
	}
	work := workIdentity{namespace: key.Namespace, name: key.Name}
	if found {
		if err := workcache.Expand(existing); err != nil {
			return err
		}
		if !existing.DeletionTimestamp.IsZero() {
			// Made again once gone: its deletion requeues the namespace.
			return nil
		}
		if ownedByBinding(existing) {
			// A binding carries the namespace to this cluster.
			return nil
		}
		work.id = existing.Labels[workv1alpha1.WorkPermanentIDLabel]
	}
	if work.id == "" {
		work.id = string(uuid.NewUUID())
	}

	rendered, matches, err := renderer.Apply(base, cluster)
	if err == nil {
		err = checkRendered(rendered, ns.Name)
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Override policies failed; the namespace's Work for the cluster is left as it is",
			"cluster", cluster.Name, "error", err.Error())
		r.Recorder.Eventf(eventTarget(ns), nil, corev1.EventTypeWarning, flotillaevents.ReasonApplyOverridePolicyFailed, actionApplyOverride,
			"Failed to apply override policies for cluster %s: %v", cluster.Name, err)
		return nil
	}
	cr := decorate(rendered, string(ns.UID), work)
	d, err := buildWork(ns, rendered, cr, work)
	if err != nil {
		return err
	}

	if !found {
		if err := r.Client.Create(ctx, d.newWork()); err != nil {
			if apierrors.IsNotFound(err) {
				// No execution namespace yet: its creation requeues every
				// namespace.
				ctrl.LoggerFrom(ctx).V(1).Info("Execution namespace missing; waiting for it", "namespace", key.Namespace)
				return nil
			}
			return fmt.Errorf("creating Work %s: %w", key, err)
		}
	} else {
		if d.upToDate(existing) {
			return nil
		}
		updated := existing.DeepCopy()
		d.apply(updated)
		if err := r.Client.Update(ctx, updated); err != nil {
			return fmt.Errorf("updating Work %s: %w", key, err)
		}
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Wrote Work", "work", key, "created", !found)
	if len(matches) > 0 {
		r.Recorder.Eventf(eventTarget(ns), nil, corev1.EventTypeNormal, flotillaevents.ReasonApplyOverridePolicySucceed, actionApplyOverride,
			"Applied override policies (%s) for cluster %s", describePolicies(matches), cluster.Name)
	}
	return nil
}

// eventTarget is the namespace as events reference it.
func eventTarget(ns *metav1.PartialObjectMetadata) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, UID: ns.UID}}
}

func describePolicies(ms []overrides.Match) string {
	refs := overrides.Policies(ms)
	out := make([]string, len(refs))
	for i, ref := range refs {
		out[i] = ref.Name
	}
	return strings.Join(out, ", ")
}

// deleteWork deletes one of this controller's Works. The preconditions
// keep a Work a binding took over, or one made again, since it was read.
func (r *Reconciler) deleteWork(ctx context.Context, w *workv1alpha1.Work) error {
	uid, rv := w.UID, w.ResourceVersion
	if err := r.Client.Delete(ctx, w, client.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Deleted Work", "work", client.ObjectKeyFromObject(w))
	return nil
}

// releaseWork removes this controller's label from a Work, leaving it, and
// the member namespace it made, to a binding.
func (r *Reconciler) releaseWork(ctx context.Context, w *workv1alpha1.Work) error {
	base := w.DeepCopy()
	delete(w.Labels, ManagedByLabel)
	if err := r.Client.Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("releasing Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Released Work to a binding", "work", client.ObjectKeyFromObject(w))
	return nil
}

// requeueOnConflict retries soon, without an error in the log, after a
// write lost a race: the next attempt starts from what the cache has now.
func requeueOnConflict(ctx context.Context, err error) (ctrl.Result, error) {
	if err != nil && allRaces(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Lost a race writing Works; retrying", "error", strings.ReplaceAll(err.Error(), "\n", "; "))
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// allRaces: every error joined in err is a write that lost a race.
func allRaces(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !allRaces(e) {
				return false
			}
		}
		return true
	}
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
}
