// Package federatedresourcequota holds Karmada's three FederatedResourceQuota
// controllers: sync writes each static assignment into its member as a
// ResourceQuota (through a Work), status brings the members' quota usage
// back into status.aggregatedStatus, and enforcement (with the
// FederatedQuotaEnforcement gate) computes status.overallUsed from the
// ResourceBindings of the quota's namespace, which the webhook checks new
// placements against.
package federatedresourcequota

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// Karmada's names of the controllers, used for events and metrics.
const (
	SyncControllerName        = "federated-resource-quota-sync-controller"
	StatusControllerName      = "federated-resource-quota-status-controller"
	EnforcementControllerName = "federated-resource-quota-enforcement-controller"
)

// Actions of the events the controllers record.
const (
	actionSync    = "Sync"
	actionCollect = "Collect"
)

// +kubebuilder:rbac:groups=policy.karmada.io,resources=federatedresourcequotas,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.karmada.io,resources=federatedresourcequotas/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SyncReconciler keeps one Work per static assignment of a
// FederatedResourceQuota, in the execution namespace of the assigned
// cluster, carrying a ResourceQuota of the quota's name and namespace with
// the assignment's hard limits. Works of assignments that are gone, of
// clusters that are gone, and of quotas that are gone are deleted; the
// execution controller then removes the ResourceQuota from the member.
type SyncReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager watches quotas, the Works they own (a Work deleted or
// changed by someone else is put back; one left over from a quota deleted
// while the controller was down is removed when it starts) and Clusters
// coming and going.
func (r *SyncReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("federated-resource-quota-sync controller: Client and Recorder are required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(SyncControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(quotaOfWork), builder.WithPredicates(
			predicate.NewPredicateFuncs(func(o client.Object) bool { return quotaOfWork(context.Background(), o) != nil }),
			predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				// Status updates are the status controller's business.
				return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
					!maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
			}})).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.quotasAssigning), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
			},
		})).
		Complete(r)
}

// quotaOfWork maps a Work labelled with a quota to that quota.
func quotaOfWork(_ context.Context, o client.Object) []reconcile.Request {
	ns, okNS := o.GetLabels()[policyv1alpha1.FederatedResourceQuotaNamespaceLabel]
	name, okName := o.GetLabels()[policyv1alpha1.FederatedResourceQuotaNameLabel]
	if !okNS || !okName {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// quotasAssigning maps a Cluster to the quotas with a static assignment
// to it.
func (r *SyncReconciler) quotasAssigning(ctx context.Context, o client.Object) []reconcile.Request {
	var quotas policyv1alpha1.FederatedResourceQuotaList
	if err := r.Client.List(ctx, &quotas); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing FederatedResourceQuotas for a cluster change", "cluster", o.GetName())
		return nil
	}
	var out []reconcile.Request
	for i := range quotas.Items {
		q := &quotas.Items[i]
		if slices.ContainsFunc(q.Spec.StaticAssignments, func(a policyv1alpha1.StaticClusterAssignment) bool { return a.ClusterName == o.GetName() }) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(q)})
		}
	}
	return out
}

// Reconcile brings the Works of one quota in line with its static
// assignments.
func (r *SyncReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	quota := &policyv1alpha1.FederatedResourceQuota{}
	if err := r.Client.Get(ctx, req.NamespacedName, quota); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading FederatedResourceQuota: %w", err)
		}
		quota = nil
	}
	var works workv1alpha1.WorkList
	if err := r.Client.List(ctx, &works, client.MatchingLabels{
		policyv1alpha1.FederatedResourceQuotaNamespaceLabel: req.Namespace,
		policyv1alpha1.FederatedResourceQuotaNameLabel:      req.Name,
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the quota's Works: %w", err)
	}
	var clusters clusterv1alpha1.ClusterList
	if err := r.Client.List(ctx, &clusters); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing clusters: %w", err)
	}
	present := map[string]bool{}
	for _, c := range clusters.Items {
		present[c.Name] = c.DeletionTimestamp.IsZero()
	}

	want := map[types.NamespacedName]policyv1alpha1.StaticClusterAssignment{}
	if quota != nil && quota.DeletionTimestamp.IsZero() {
		for _, a := range quota.Spec.StaticAssignments {
			if present[a.ClusterName] {
				want[workKey(quota, a.ClusterName)] = a
			}
		}
	}
	existing := map[types.NamespacedName]*workv1alpha1.Work{}
	var errs []error
	written := 0
	for i := range works.Items {
		w := &works.Items[i]
		key := client.ObjectKeyFromObject(w)
		if _, ok := want[key]; ok {
			existing[key] = w
			continue
		}
		if !w.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting Work %s: %w", key, err))
			continue
		}
		log.V(1).Info("Deleted the Work of a static assignment that is gone", "work", key)
		written++
	}
	for key, a := range want {
		wrote, err := r.ensureWork(ctx, quota, a, existing[key])
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", a.ClusterName, err))
		}
		if wrote {
			written++
		}
	}
	if err := errors.Join(errs...); err != nil {
		if quota != nil {
			r.Recorder.Eventf(quota, nil, corev1.EventTypeWarning, flotillaevents.ReasonSyncWorkFailed, actionSync, "%s", err.Error())
		}
		return ctrl.Result{}, err
	}
	if quota != nil && written > 0 {
		r.Recorder.Eventf(quota, nil, corev1.EventTypeNormal, flotillaevents.ReasonSyncWorkSucceed, actionSync,
			"Sync works for FederatedResourceQuota(%s) succeed.", req.NamespacedName)
	}
	return ctrl.Result{}, nil
}

// workKey is where the Work of quota's assignment to cluster lives: the
// name a template ResourceQuota of the quota's name would get.
func workKey(quota *policyv1alpha1.FederatedResourceQuota, cluster string) types.NamespacedName {
	return types.NamespacedName{
		Namespace: names.ExecutionSpace(cluster),
		Name:      names.Work(quota.Namespace, quota.Name, "ResourceQuota"),
	}
}

// ensureWork creates or updates the Work of one assignment; it reports
// whether it wrote.
func (r *SyncReconciler) ensureWork(ctx context.Context, quota *policyv1alpha1.FederatedResourceQuota,
	a policyv1alpha1.StaticClusterAssignment, existing *workv1alpha1.Work) (bool, error) {
	key := workKey(quota, a.ClusterName)
	id := ""
	if existing != nil {
		id = existing.Labels[workv1alpha1.WorkPermanentIDLabel]
	}
	if id == "" {
		id = string(uuid.NewUUID())
	}
	manifest, err := resourceQuotaManifest(quota, a, key, id)
	if err != nil {
		return false, err
	}
	labels := map[string]string{
		policyv1alpha1.FederatedResourceQuotaNamespaceLabel: quota.Namespace,
		policyv1alpha1.FederatedResourceQuotaNameLabel:      quota.Name,
		workv1alpha1.ManagedByKarmadaLabel:                  workv1alpha1.ManagedByKarmadaLabelValue,
		workv1alpha1.WorkPermanentIDLabel:                   id,
	}
	if existing == nil {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name, Labels: labels,
			// Never gone before the member's ResourceQuota is.
			Finalizers: []string{workv1alpha1.ExecutionControllerFinalizer},
		}}
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}
		if err := r.Client.Create(ctx, w); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Written by the previous pass and not in the cache yet; its
				// event brings the quota back.
				return false, nil
			}
			return false, fmt.Errorf("creating Work %s: %w", key, err)
		}
		return true, nil
	}
	if !existing.DeletionTimestamp.IsZero() {
		// Going; its deletion event brings the quota back to create it anew.
		return false, nil
	}
	same := len(existing.Spec.Workload.Manifests) == 1 && containsAll(existing.Labels, labels) &&
		slices.Contains(existing.Finalizers, workv1alpha1.ExecutionControllerFinalizer) &&
		!ptr.Deref(existing.Spec.SuspendDispatching, false)
	if same {
		if same, err = workcache.SameManifest(existing, 0, manifest); err != nil {
			return false, err
		}
	}
	if same {
		return false, nil
	}
	updated := existing.DeepCopy()
	if err := workcache.Expand(updated); err != nil {
		return false, err
	}
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	maps.Copy(updated.Labels, labels)
	if !slices.Contains(updated.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		updated.Finalizers = append(updated.Finalizers, workv1alpha1.ExecutionControllerFinalizer)
	}
	updated.Spec.SuspendDispatching = nil
	updated.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}
	if err := r.Client.Update(ctx, updated); err != nil {
		return false, fmt.Errorf("updating Work %s: %w", key, err)
	}
	return true, nil
}

// resourceQuotaManifest is the member's ResourceQuota of an assignment,
// already carrying the labels and annotations that tie it to its Work (the
// Work webhook would add them otherwise, and the Work would never compare
// equal to what this controller renders).
func resourceQuotaManifest(quota *policyv1alpha1.FederatedResourceQuota, a policyv1alpha1.StaticClusterAssignment,
	work types.NamespacedName, id string) ([]byte, error) {
	rq := &corev1.ResourceQuota{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: quota.Namespace,
			Name:      quota.Name,
			Labels: map[string]string{
				workv1alpha1.ManagedByKarmadaLabel: workv1alpha1.ManagedByKarmadaLabelValue,
				workv1alpha1.WorkPermanentIDLabel:  id,
			},
			Annotations: map[string]string{
				workv1alpha1.WorkNamespaceAnnotation: work.Namespace,
				workv1alpha1.WorkNameAnnotation:      work.Name,
			},
		},
		Spec: corev1.ResourceQuotaSpec{Hard: a.Hard},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rq)
	if err != nil {
		return nil, fmt.Errorf("converting the ResourceQuota: %w", err)
	}
	// Neither creationTimestamp: null nor an empty status goes to members.
	delete(obj["metadata"].(map[string]any), "creationTimestamp")
	delete(obj, "status")
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding the ResourceQuota: %w", err)
	}
	return raw, nil
}

func containsAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
