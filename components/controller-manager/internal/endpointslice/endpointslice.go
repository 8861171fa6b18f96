// Package endpointslice is the endpointslice controller: it turns the
// EndpointSlices collected from member clusters (Works labelled
// endpointslice.karmada.io/name, see package serviceexport) into
// EndpointSlices of the control plane, as Karmada's does.
//
// The EndpointSlice <slice> of Service <svc> collected from cluster <c>
// becomes imported-<c>-<slice> in <svc>'s namespace, labelled
// kubernetes.io/service-name: derived-<svc>, so that it belongs to the
// Service a ServiceImport derives, and work.karmada.io/permanent-id with
// the Work's id; it is annotated with the Work's namespace and name. It
// carries the endpoints and ports of the member's slice and nothing of its
// metadata. The dependencies of a ServiceImport (the derived Service and
// these slices) follow it to the clusters that import the service.
//
// The Work's finalizer karmada.io/endpointslice-controller keeps it until
// its EndpointSlices are deleted; so does a Work that no longer names a
// Service (its export ended while a MultiClusterService still collects it).
package endpointslice

import (
	"context"
	"errors"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/json"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// ControllerName is Karmada's name of the controller.
const ControllerName = "endpointslice-controller"

// Name is the control-plane EndpointSlice made of the member EndpointSlice
// slice of cluster.
func Name(slice, cluster string) string {
	return "imported-" + cluster + "-" + slice
}

// Reconciler keeps the control plane's EndpointSlices of collected Works.
// Set the exported fields, then call SetupWithManager.
type Reconciler struct {
	// Client reads Works and EndpointSlices through the manager's cache and
	// writes EndpointSlices and Works' finalizers.
	Client client.Client
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch;create;update;patch;delete;deletecollection

// SetupWithManager registers the controller on the collected Works: those
// naming a Service, and those still holding its finalizer.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		return errors.New("endpointslice controller: Client is required")
	}
	collected := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[workv1alpha1.ServiceNameLabel] != "" ||
			controllerutil.ContainsFinalizer(o, workv1alpha1.EndpointSliceControllerFinalizer)
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.Work{}, builder.WithPredicates(execution.InExecutionSpace(), collected)).
		Complete(r)
}

// Reconcile writes the EndpointSlices of one collected Work, or removes
// them and releases the Work.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster, ok := names.ClusterOfExecutionSpace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Patches are computed on the Work as the server has it, manifests
	// unpacked.
	if err := workcache.Expand(work); err != nil {
		return ctrl.Result{}, err
	}
	id := work.Labels[workv1alpha1.WorkPermanentIDLabel]
	service := work.Labels[workv1alpha1.ServiceNameLabel]
	if !work.DeletionTimestamp.IsZero() || service == "" {
		if !controllerutil.ContainsFinalizer(work, workv1alpha1.EndpointSliceControllerFinalizer) {
			return ctrl.Result{}, nil
		}
		if err := r.deleteSlices(ctx, id); err != nil {
			return ctrl.Result{}, err
		}
		base := work.DeepCopy()
		controllerutil.RemoveFinalizer(work, workv1alpha1.EndpointSliceControllerFinalizer)
		if err := r.Client.Patch(ctx, work, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		return ctrl.Result{}, nil
	}
	if id == "" {
		// The execution controller (or the webhook) gives every Work its
		// id; the label's arrival brings the Work back.
		return ctrl.Result{}, nil
	}
	var errs []error
	for i, m := range work.Spec.Workload.Manifests {
		desired, err := Derive(m.Raw, cluster, service, work)
		if err != nil {
			// A manifest that is no EndpointSlice stays as it is: retrying
			// would not change it.
			ctrl.LoggerFrom(ctx).Error(err, "Skipping a manifest", "ordinal", i)
			continue
		}
		if err := r.apply(ctx, desired); err != nil {
			errs = append(errs, err)
		}
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// Derive is the control-plane EndpointSlice of the collected manifest raw,
// an EndpointSlice of cluster, for Service service, from work.
func Derive(raw []byte, cluster, service string, work *workv1alpha1.Work) (*discoveryv1.EndpointSlice, error) {
	var u map[string]any
	if err := json.Unmarshal(raw, &u); err != nil {
		return nil, fmt.Errorf("decoding manifest: %w", err)
	}
	var member discoveryv1.EndpointSlice
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &member); err != nil {
		return nil, fmt.Errorf("decoding EndpointSlice: %w", err)
	}
	if member.Name == "" || member.Namespace == "" {
		return nil, errors.New("manifest is no namespaced EndpointSlice")
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: member.Namespace,
			Name:      Name(member.Name, cluster),
			Labels: map[string]string{
				workv1alpha1.WorkPermanentIDLabel: work.Labels[workv1alpha1.WorkPermanentIDLabel],
				discoveryv1.LabelServiceName:      names.DerivedService(service),
			},
			Annotations: map[string]string{
				workv1alpha1.WorkNamespaceAnnotation: work.Namespace,
				workv1alpha1.WorkNameAnnotation:      work.Name,
			},
		},
		AddressType: member.AddressType,
		Endpoints:   member.Endpoints,
		Ports:       member.Ports,
	}, nil
}

// apply creates the EndpointSlice or updates what differs.
func (r *Reconciler) apply(ctx context.Context, desired *discoveryv1.EndpointSlice) error {
	existing := &discoveryv1.EndpointSlice{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating EndpointSlice %s/%s: %w", desired.Namespace, desired.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("getting EndpointSlice %s/%s: %w", desired.Namespace, desired.Name, err)
	}
	if existing.AddressType != desired.AddressType {
		// Immutable: replace it.
		if err := r.Client.Delete(ctx, existing); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("replacing EndpointSlice %s/%s: %w", desired.Namespace, desired.Name, err)
		}
		return r.apply(ctx, desired)
	}
	updated := existing.DeepCopy()
	updated.Labels, updated.Annotations = merged(existing.Labels, desired.Labels), merged(existing.Annotations, desired.Annotations)
	updated.Endpoints, updated.Ports = desired.Endpoints, desired.Ports
	if equalSlices(existing, updated) {
		return nil
	}
	if err := r.Client.Update(ctx, updated); err != nil {
		return fmt.Errorf("updating EndpointSlice %s/%s: %w", desired.Namespace, desired.Name, err)
	}
	return nil
}

// deleteSlices deletes the control plane's EndpointSlices of the Work with
// permanent id id.
func (r *Reconciler) deleteSlices(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	var list discoveryv1.EndpointSliceList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{workv1alpha1.WorkPermanentIDLabel: id}); err != nil {
		return fmt.Errorf("listing EndpointSlices of the Work: %w", err)
	}
	var errs []error
	for i := range list.Items {
		if err := r.Client.Delete(ctx, &list.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting EndpointSlice %s/%s: %w", list.Items[i].Namespace, list.Items[i].Name, err))
		}
	}
	return errors.Join(errs...)
}
