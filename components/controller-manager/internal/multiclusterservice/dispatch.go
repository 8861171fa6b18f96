package multiclusterservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/serviceexport"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// DispatchControllerName is Karmada's name of the dispatch controller.
const DispatchControllerName = "endpointslice-dispatch-controller"

// DispatchReconciler dispatches the EndpointSlices collected for
// MultiClusterServices to their consumer clusters. Set the exported fields,
// then call SetupWithManager.
type DispatchReconciler struct {
	// Client reads through the manager's cache and writes Works.
	Client client.Client
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.karmada.io,resources=multiclusterservices,verbs=get;list;watch

// collectedForMCS tells a Work collected for a MultiClusterService, or one
// still holding this controller's finalizer.
func collectedForMCS(o client.Object) bool {
	return slices.Contains(serviceexport.ManagedBy(o.GetLabels()), Kind) ||
		controllerutil.ContainsFinalizer(o, networkingv1alpha1.MCSEndpointSliceDispatchControllerFinalizer)
}

// SetupWithManager registers the controller on the collected Works and on
// MultiClusterServices, whose consumers may change.
func (r *DispatchReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		return errors.New("endpointslice-dispatch controller: Client is required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(DispatchControllerName).
		For(&workv1alpha1.Work{}, builder.WithPredicates(execution.InExecutionSpace(), predicate.NewPredicateFuncs(collectedForMCS))).
		Watches(&networkingv1alpha1.MultiClusterService{}, handler.EnqueueRequestsFromMapFunc(r.collectedOf)).
		Complete(r)
}

// collectedOf maps a MultiClusterService to the Works collected for it.
func (r *DispatchReconciler) collectedOf(ctx context.Context, o client.Object) []reconcile.Request {
	var list workv1alpha1.WorkList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{
		workv1alpha1.MultiClusterServiceNamespaceLabel: o.GetNamespace(),
		workv1alpha1.MultiClusterServiceNameLabel:      o.GetName(),
	}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing collected Works")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if collectedForMCS(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// DispatchedName is the EndpointSlice a consumer gets for the slice of
// provider.
func DispatchedName(provider, slice string) string { return provider + "-" + slice }

// Reconcile dispatches one collected EndpointSlice to the consumers, or
// withdraws it.
func (r *DispatchReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	provider, ok := names.ClusterOfExecutionSpace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := workcache.Expand(work); err != nil {
		return ctrl.Result{}, err
	}
	if len(work.Spec.Workload.Manifests) != 1 {
		return ctrl.Result{}, nil
	}
	var slice discoveryv1.EndpointSlice
	if err := json.Unmarshal(work.Spec.Workload.Manifests[0].Raw, &slice); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Collected Work holds no EndpointSlice")
		return ctrl.Result{}, nil
	}
	all, err := clusterNames(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	var consumers []string
	mcsKey := client.ObjectKey{Namespace: work.Labels[workv1alpha1.MultiClusterServiceNamespaceLabel], Name: work.Labels[workv1alpha1.MultiClusterServiceNameLabel]}
	active := work.DeletionTimestamp.IsZero() && slices.Contains(serviceexport.ManagedBy(work.Labels), Kind) && mcsKey.Name != ""
	if active {
		mcs := &networkingv1alpha1.MultiClusterService{}
		if err := r.Client.Get(ctx, mcsKey, mcs); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
		} else if mcs.DeletionTimestamp.IsZero() && CrossCluster(mcs) {
			consumers = slices.DeleteFunc(Selected(mcs.Spec.ConsumerClusters, all), func(c string) bool { return c == provider })
		}
	}
	if len(consumers) > 0 && !controllerutil.ContainsFinalizer(work, networkingv1alpha1.MCSEndpointSliceDispatchControllerFinalizer) {
		base := work.DeepCopy()
		controllerutil.AddFinalizer(work, networkingv1alpha1.MCSEndpointSliceDispatchControllerFinalizer)
		if err := r.Client.Patch(ctx, work, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	name := names.Work(slice.Namespace, DispatchedName(provider, slice.Name), "EndpointSlice")
	var errs []error
	for _, cluster := range all {
		key := client.ObjectKey{Namespace: names.ExecutionSpace(cluster), Name: name}
		if slices.Contains(consumers, cluster) {
			if err := r.ensureDispatched(ctx, key, provider, mcsKey, &slice); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		existing := &workv1alpha1.Work{}
		if err := r.Client.Get(ctx, key, existing); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		if existing.Annotations[workv1alpha1.EndpointSliceProvisionClusterAnnotation] != provider {
			continue
		}
		if err := r.Client.Delete(ctx, existing); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("withdrawing %s: %w", key, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if len(consumers) == 0 && controllerutil.ContainsFinalizer(work, networkingv1alpha1.MCSEndpointSliceDispatchControllerFinalizer) {
		base := work.DeepCopy()
		controllerutil.RemoveFinalizer(work, networkingv1alpha1.MCSEndpointSliceDispatchControllerFinalizer)
		if err := r.Client.Patch(ctx, work, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	return ctrl.Result{}, nil
}

// Dispatched is the EndpointSlice a consumer gets for slice of provider:
// the endpoints and ports, under the provider's name, for the Service of
// the same name, managed by the dispatch controller.
func Dispatched(provider string, slice *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: slice.Namespace,
			Name:      DispatchedName(provider, slice.Name),
			Labels: map[string]string{
				discoveryv1.LabelServiceName: slice.Labels[discoveryv1.LabelServiceName],
				discoveryv1.LabelManagedBy:   workv1alpha1.EndpointSliceDispatchControllerLabelValue,
			},
		},
		AddressType: slice.AddressType,
		Endpoints:   slice.Endpoints,
		Ports:       slice.Ports,
	}
}

// ensureDispatched writes the Work that applies the dispatched slice in a
// consumer.
func (r *DispatchReconciler) ensureDispatched(ctx context.Context, key client.ObjectKey, provider string, mcs client.ObjectKey, slice *discoveryv1.EndpointSlice) error {
	raw, err := json.Marshal(Dispatched(provider, slice))
	if err != nil {
		return err
	}
	existing := &workv1alpha1.Work{}
	err = r.Client.Get(ctx, key, existing)
	switch {
	case apierrors.IsNotFound(err):
		w := &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels: map[string]string{
					workv1alpha1.MultiClusterServiceNamespaceLabel: mcs.Namespace,
					workv1alpha1.MultiClusterServiceNameLabel:      mcs.Name,
				},
				Annotations: map[string]string{workv1alpha1.EndpointSliceProvisionClusterAnnotation: provider},
			},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
		}
		if err := r.Client.Create(ctx, w); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("dispatching to %s: %w", key, err)
		}
		return nil
	case err != nil:
		return err
	}
	same, err := workcache.SameManifest(existing, 0, raw)
	if err != nil || same {
		return err
	}
	w := existing.DeepCopy()
	if err := workcache.Expand(w); err != nil {
		return err
	}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	if err := r.Client.Update(ctx, w); err != nil {
		return fmt.Errorf("updating %s: %w", key, err)
	}
	return nil
}
