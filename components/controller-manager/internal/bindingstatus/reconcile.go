package bindingstatus

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

// actionAggregateStatus is the events' action (events.k8s.io/v1 requires
// one).
const actionAggregateStatus = "AggregateStatus"

// conflictRetry requeues after a write lost a race with another writer.
const conflictRetry = 200 * time.Millisecond

func (r *Reconciler) reconcileResourceBinding(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, rb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return r.reconcileView(ctx, binding.ViewOf(rb))
}

func (r *Reconciler) reconcileClusterResourceBinding(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crb := &workv1alpha2.ClusterResourceBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, crb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return r.reconcileView(ctx, binding.ClusterViewOf(crb))
}

func (r *Reconciler) reconcileView(ctx context.Context, v binding.View) (ctrl.Result, error) {
	settle, err := r.reconcile(ctx, v)
	if err != nil {
		return requeueOnConflict(ctx, err)
	}
	return ctrl.Result{RequeueAfter: settle}, nil
}

func requeueOnConflict(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Lost a race writing; retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// reconcile aggregates the Works of one binding into its status, then into
// its template's status. A new binding whose Works are still on their way
// is looked at again after the returned wait instead.
func (r *Reconciler) reconcile(ctx context.Context, v binding.View) (time.Duration, error) {
	if !v.Object.GetDeletionTimestamp().IsZero() {
		return 0, nil
	}
	items, err := r.collect(ctx, v)
	if err != nil {
		return 0, err
	}
	if settling(v, items, time.Now(), r.FirstReportGrace) {
		return aggregationDelay, nil
	}
	return 0, r.aggregate(ctx, v, items)
}

// aggregate writes items into the binding's status and the template's.
// Whenever it wrote either, it records AggregateStatusSucceed on the
// binding and on the template, as Karmada does for every kind: also for
// those without a status of their own to aggregate (a ClusterIP Service),
// whose binding still reports each cluster.
func (r *Reconciler) aggregate(ctx context.Context, v binding.View, items []workv1alpha2.AggregatedStatusItem) error {
	bindingWritten, err := r.patchStatus(ctx, v, items)
	if err != nil {
		return err
	}

	ref := v.Spec.Resource
	var written *unstructured.Unstructured
	if r.templates.enabled(ref) {
		written, err = r.templates.update(ctx, ref, items)
		if err = ignoreGone(err); err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			r.Recorder.Eventf(v.Object, nil, corev1.EventTypeWarning, flotillaevents.ReasonAggregateStatusFailed, actionAggregateStatus,
				"Failed to aggregate status into %s %s: %v", ref.Kind, ref.Name, err)
			if t, terr := r.Templates.Cached(ctx, ref); terr == nil {
				r.Recorder.Eventf(t, nil, corev1.EventTypeWarning, flotillaevents.ReasonAggregateStatusFailed, actionAggregateStatus,
					"Failed to aggregate status: %v", err)
			}
			return fmt.Errorf("aggregating status into the template: %w", err)
		}
	}
	if written != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Updated template status", "template", ref)
	}
	if !bindingWritten && written == nil {
		return nil
	}
	message := aggregatedMessage(v)
	r.Recorder.Eventf(v.Object, nil, corev1.EventTypeNormal, flotillaevents.ReasonAggregateStatusSucceed, actionAggregateStatus, "%s", message)
	r.Recorder.Eventf(templateRef(ref), nil, corev1.EventTypeNormal, flotillaevents.ReasonAggregateStatusSucceed, actionAggregateStatus, "%s", message)
	return nil
}

// templateRef stands for the template of ref in events: its identity is
// all they need, so neither the cache nor the API server is read.
func templateRef(ref workv1alpha2.ObjectReference) *metav1.PartialObjectMetadata {
	t := &metav1.PartialObjectMetadata{}
	t.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	t.SetNamespace(ref.Namespace)
	t.SetName(ref.Name)
	t.SetUID(ref.UID)
	return t
}

// aggregatedMessage is Karmada's note of AggregateStatusSucceed.
func aggregatedMessage(v binding.View) string {
	if v.Clustered() {
		return fmt.Sprintf("Update ClusterResourceBinding(%s) with AggregatedStatus successfully.", v.Object.GetName())
	}
	return fmt.Sprintf("Update ResourceBinding(%s/%s) with AggregatedStatus successfully.", v.Object.GetNamespace(), v.Object.GetName())
}

// collect builds one aggregated status item per cluster where the binding
// should be, sorted by cluster name, from the Works in the cache. A Work
// is found by its name; one of that name that belongs to another binding
// counts as missing.
func (r *Reconciler) collect(ctx context.Context, v binding.View) ([]workv1alpha2.AggregatedStatusItem, error) {
	clusters := slices.Sorted(maps.Keys(binding.ExistingClusters(v.Spec)))
	ref := v.Spec.Resource
	name := names.Work(ref.Namespace, ref.Name, ref.Kind)
	items := make([]workv1alpha2.AggregatedStatusItem, 0, len(clusters))
	for _, c := range clusters {
		w := &workv1alpha1.Work{}
		// Without a copy: only read, the status it needs unpacked on its own.
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: names.ExecutionSpace(c), Name: name}, w, client.UnsafeDisableDeepCopy)
		switch {
		case apierrors.IsNotFound(err):
			w = nil
		case err != nil:
			return nil, fmt.Errorf("reading Work of cluster %s: %w", c, err)
		case !v.Owns(w.Labels, w.Annotations):
			w = nil
		}
		item, err := itemFor(c, w, ref)
		if err != nil {
			return nil, fmt.Errorf("aggregating the Work of cluster %s: %w", c, err)
		}
		items = append(items, item)
	}
	return items, nil
}

// patchStatus writes aggregatedStatus and the FullyApplied condition when
// they changed. The write is an update of the status subresource: it fails
// if the scheduler wrote meanwhile, whose conditions it would otherwise
// replace, and costs the API server less than a patch of the same object.
func (r *Reconciler) patchStatus(ctx context.Context, v binding.View, items []workv1alpha2.AggregatedStatusItem) (bool, error) {
	changed := false
	if !sameItems(v.Status.AggregatedStatus, items) {
		v.Status.AggregatedStatus = items
		changed = true
	}
	if meta.SetStatusCondition(&v.Status.Conditions, fullyApplied(items, v.Object.GetGeneration())) {
		changed = true
	}
	if !changed {
		return false, nil
	}
	if err := r.Client.Status().Update(ctx, v.Object); err != nil {
		return false, fmt.Errorf("updating %s status: %w", v.Kind(), err)
	}
	return true, nil
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
