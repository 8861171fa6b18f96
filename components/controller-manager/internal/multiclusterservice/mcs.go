package multiclusterservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ControllerName is Karmada's name of the multiclusterservice controller.
const ControllerName = "multiclusterservice-controller"

// Kind is the MultiClusterService kind, the value of the claimed-by and
// managed-by labels of what it takes.
const Kind = "MultiClusterService"

// Reconciler propagates the Services of CrossCluster MultiClusterServices.
// Set the exported fields, then call SetupWithManager.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client   client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=networking.karmada.io,resources=multiclusterservices,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=networking.karmada.io,resources=multiclusterservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=networking.karmada.io,resources=multiclusterservices/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;patch;delete

// SetupWithManager registers the controller on MultiClusterServices, their
// Services and the Clusters (a provider turning Ready gets its Work).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("multiclusterservice controller: Client and Recorder are required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&networkingv1alpha1.MultiClusterService{}).
		Watches(&corev1.Service{}, &handler.EnqueueRequestForObject{}).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allServices)).
		Complete(r)
}

// allServices maps a Cluster to every MultiClusterService.
func (r *Reconciler) allServices(ctx context.Context, _ client.Object) []reconcile.Request {
	var list networkingv1alpha1.MultiClusterServiceList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing MultiClusterServices")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// Reconcile propagates the Service of one MultiClusterService, or releases
// it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mcs := &networkingv1alpha1.MultiClusterService{}
	if err := r.Client.Get(ctx, req.NamespacedName, mcs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mcs.DeletionTimestamp.IsZero() || !CrossCluster(mcs) {
		if !controllerutil.ContainsFinalizer(mcs, networkingv1alpha1.MCSControllerFinalizer) {
			return ctrl.Result{}, nil
		}
		if err := r.release(ctx, mcs); err != nil {
			r.Recorder.Eventf(mcs, nil, corev1.EventTypeWarning, flotillaevents.ReasonSyncServiceFailed, "Release", "%v", err)
			return ctrl.Result{}, err
		}
		base := mcs.DeepCopy()
		controllerutil.RemoveFinalizer(mcs, networkingv1alpha1.MCSControllerFinalizer)
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, mcs, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
	}
	if !controllerutil.ContainsFinalizer(mcs, networkingv1alpha1.MCSControllerFinalizer) {
		base := mcs.DeepCopy()
		controllerutil.AddFinalizer(mcs, networkingv1alpha1.MCSControllerFinalizer)
		if err := r.Client.Patch(ctx, mcs, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	err := r.propagate(ctx, mcs)
	cond := metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionTrue,
		Reason: networkingv1alpha1.MCSServiceAppliedSucceed, Message: "Service is propagated to target clusters.", ObservedGeneration: mcs.Generation}
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, networkingv1alpha1.MCSServiceAppliedFailed, err.Error()
	}
	base := mcs.DeepCopy()
	if meta.SetStatusCondition(&mcs.Status.Conditions, cond) {
		if perr := r.Client.Status().Patch(ctx, mcs, client.MergeFrom(base)); perr != nil {
			err = errors.Join(err, fmt.Errorf("updating status: %w", perr))
		}
		if cond.Status == metav1.ConditionTrue {
			r.Recorder.Eventf(mcs, nil, corev1.EventTypeNormal, flotillaevents.ReasonSyncServiceSucceed, "SyncService", cond.Message)
		}
	}
	if err != nil {
		r.Recorder.Eventf(mcs, nil, corev1.EventTypeWarning, flotillaevents.ReasonSyncServiceFailed, "SyncService", "%v", err)
	}
	return ctrl.Result{}, err
}

// propagate writes the provider Works, claims the Service and writes its
// binding.
func (r *Reconciler) propagate(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService) error {
	all, err := clusterNames(ctx, r.Client)
	if err != nil {
		return err
	}
	providers, consumers := Selected(mcs.Spec.ProviderClusters, all), Selected(mcs.Spec.ConsumerClusters, all)
	var ready []string
	for _, name := range providers {
		c := &clusterv1alpha1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("getting provider cluster %s: %w", name, err)
		}
		if execution.IsReady(c) {
			ready = append(ready, name)
		}
	}
	if err := r.syncProviderWorks(ctx, mcs, ready); err != nil {
		return err
	}
	svc := &corev1.Service{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: mcs.Namespace, Name: mcs.Name}, svc); err != nil {
		if apierrors.IsNotFound(err) {
			// Propagated once it exists; its creation brings the
			// MultiClusterService back.
			return nil
		}
		return fmt.Errorf("getting Service: %w", err)
	}
	if err := r.claim(ctx, mcs, svc); err != nil {
		return err
	}
	return r.writeBinding(ctx, mcs, svc, slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(providers), consumers...)))))
}

// providerWork is the suspended Work that carries mcs into a provider's
// execution namespace.
func providerWork(mcs *networkingv1alpha1.MultiClusterService, cluster string) (*workv1alpha1.Work, error) {
	obj := &networkingv1alpha1.MultiClusterService{
		TypeMeta:   metav1.TypeMeta{APIVersion: networkingv1alpha1.GroupVersion.String(), Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: mcs.Namespace, Name: mcs.Name, Labels: mcs.Labels},
		Spec:       mcs.Spec,
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: names.ExecutionSpace(cluster),
			Name:      names.Work(mcs.Namespace, mcs.Name, Kind),
			Labels: map[string]string{
				networkingv1alpha1.MultiClusterServicePermanentIDLabel: mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel],
				workv1alpha1.MultiClusterServiceNamespaceLabel:         mcs.Namespace,
				workv1alpha1.MultiClusterServiceNameLabel:              mcs.Name,
			},
		},
		Spec: workv1alpha1.WorkSpec{
			SuspendDispatching: ptr.To(true),
			Workload:           workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
		},
	}, nil
}

// syncProviderWorks makes the provider Works of mcs exactly those of
// providers.
func (r *Reconciler) syncProviderWorks(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService, providers []string) error {
	existing, err := r.providerWorks(ctx, mcs)
	if err != nil {
		return err
	}
	var errs []error
	for _, w := range existing {
		cluster, _ := names.ClusterOfExecutionSpace(w.Namespace)
		if !slices.Contains(providers, cluster) {
			if err := r.Client.Delete(ctx, &w); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting Work %s/%s: %w", w.Namespace, w.Name, err))
			}
		}
	}
	for _, cluster := range providers {
		want, err := providerWork(mcs, cluster)
		if err != nil {
			return err
		}
		got := &workv1alpha1.Work{}
		err = r.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
		switch {
		case apierrors.IsNotFound(err):
			if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
				errs = append(errs, fmt.Errorf("creating Work %s/%s: %w", want.Namespace, want.Name, err))
			}
		case err != nil:
			errs = append(errs, err)
		}
		// The Work only marks the provider; its manifest is read by no one,
		// so an existing one is left as it is.
	}
	return errors.Join(errs...)
}

// providerWorks lists the Works of mcs in the execution namespaces.
func (r *Reconciler) providerWorks(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService) ([]workv1alpha1.Work, error) {
	var list workv1alpha1.WorkList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{
		workv1alpha1.MultiClusterServiceNamespaceLabel: mcs.Namespace,
		workv1alpha1.MultiClusterServiceNameLabel:      mcs.Name,
	}); err != nil {
		return nil, fmt.Errorf("listing the Works of the MultiClusterService: %w", err)
	}
	name := names.Work(mcs.Namespace, mcs.Name, Kind)
	return slices.DeleteFunc(list.Items, func(w workv1alpha1.Work) bool { return w.Name != name }), nil
}

// claim takes the Service from any policy: the detector leaves a template
// claimed by a MultiClusterService alone.
func (r *Reconciler) claim(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService, svc *corev1.Service) error {
	base := svc.DeepCopy()
	labels, annotations := maps.Clone(svc.Labels), maps.Clone(svc.Annotations)
	if labels == nil {
		labels = map[string]string{}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(labels, policyv1alpha1.PropagationPolicyPermanentIDLabel)
	delete(labels, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)
	delete(annotations, policyv1alpha1.PropagationPolicyNameAnnotation)
	delete(annotations, policyv1alpha1.PropagationPolicyNamespaceAnnotation)
	delete(annotations, policyv1alpha1.ClusterPropagationPolicyAnnotation)
	labels[policyv1alpha1.ResourceTemplateClaimedByLabel] = Kind
	labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] = mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel]
	annotations[networkingv1alpha1.MultiClusterServiceNameAnnotation] = mcs.Name
	annotations[networkingv1alpha1.MultiClusterServiceNamespaceAnnotation] = mcs.Namespace
	if maps.Equal(labels, svc.Labels) && maps.Equal(annotations, svc.Annotations) {
		return nil
	}
	svc.Labels, svc.Annotations = labels, annotations
	if err := r.Client.Patch(ctx, svc, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("claiming Service: %w", err)
	}
	return nil
}

// writeBinding creates or updates the Service's binding, placed on
// clusters; the schedule it already has is kept.
func (r *Reconciler) writeBinding(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService, svc *corev1.Service, clusters []string) error {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: names.Binding(svc.Name, "Service")}}
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, rb, func() error {
		if owner := metav1.GetControllerOfNoCopy(rb); owner != nil && owner.UID != svc.UID {
			return fmt.Errorf("binding %s/%s is owned by another Service (uid %s); waiting for the garbage collector", rb.Namespace, rb.Name, owner.UID)
		}
		if rb.Labels == nil {
			rb.Labels = map[string]string{}
		}
		if rb.Annotations == nil {
			rb.Annotations = map[string]string{}
		}
		rb.Labels[workv1alpha2.BindingManagedByLabel] = Kind
		rb.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] = mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel]
		rb.Annotations[networkingv1alpha1.MultiClusterServiceNameAnnotation] = mcs.Name
		rb.Annotations[networkingv1alpha1.MultiClusterServiceNamespaceAnnotation] = mcs.Namespace
		rb.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
		controllerutil.AddFinalizer(rb, workv1alpha2.BindingControllerFinalizer)
		rb.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}}
		rb.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
		rb.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Service", Namespace: svc.Namespace, Name: svc.Name,
			UID: svc.UID, ResourceVersion: svc.ResourceVersion}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing binding of the Service: %w", err)
	}
	return nil
}

// release gives the Service back to policies, keeping its binding as a
// deleted policy does, and deletes the provider Works.
func (r *Reconciler) release(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService) error {
	svc := &corev1.Service{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: mcs.Namespace, Name: mcs.Name}, svc)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("getting Service: %w", err)
	case svc.Labels[policyv1alpha1.ResourceTemplateClaimedByLabel] == Kind:
		base := svc.DeepCopy()
		delete(svc.Labels, policyv1alpha1.ResourceTemplateClaimedByLabel)
		delete(svc.Labels, networkingv1alpha1.MultiClusterServicePermanentIDLabel)
		delete(svc.Annotations, networkingv1alpha1.MultiClusterServiceNameAnnotation)
		delete(svc.Annotations, networkingv1alpha1.MultiClusterServiceNamespaceAnnotation)
		if err := r.Client.Patch(ctx, svc, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("releasing Service: %w", err)
		}
	}
	rb := &workv1alpha2.ResourceBinding{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: mcs.Namespace, Name: names.Binding(mcs.Name, "Service")}, rb)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("getting binding: %w", err)
	case rb.Labels[workv1alpha2.BindingManagedByLabel] == Kind:
		base := rb.DeepCopy()
		delete(rb.Labels, workv1alpha2.BindingManagedByLabel)
		delete(rb.Labels, networkingv1alpha1.MultiClusterServicePermanentIDLabel)
		delete(rb.Annotations, networkingv1alpha1.MultiClusterServiceNameAnnotation)
		delete(rb.Annotations, networkingv1alpha1.MultiClusterServiceNamespaceAnnotation)
		if err := r.Client.Patch(ctx, rb, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("releasing binding: %w", err)
		}
	}
	return r.syncProviderWorks(ctx, mcs, nil)
}
