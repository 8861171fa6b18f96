package federatedresourcequota

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// StatusReconciler collects the status of the members' ResourceQuotas, as
// the work-status controller reflects it into the quota's Works, into
// status.aggregatedStatus. Without enforcement it also writes
// status.overall (the spec's) and status.overallUsed (the members' usage
// summed), as Karmada does; with enforcement those are the enforcement
// controller's.
type StatusReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Enforcement is the FederatedQuotaEnforcement gate.
	Enforcement bool
}

// SetupWithManager watches quotas and the status of their Works.
func (r *StatusReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("federated-resource-quota-status controller: Client and Recorder are required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(StatusControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(quotaOfWork), builder.WithPredicates(
			predicate.NewPredicateFuncs(func(o client.Object) bool { return quotaOfWork(context.Background(), o) != nil }),
			predicate.Funcs{
				CreateFunc: func(event.CreateEvent) bool { return false },
				UpdateFunc: func(e event.UpdateEvent) bool {
					o, okOld := e.ObjectOld.(*workv1alpha1.Work)
					n, okNew := e.ObjectNew.(*workv1alpha1.Work)
					return !okOld || !okNew || !equality.Semantic.DeepEqual(o.Status, n.Status)
				},
			})).
		Complete(r)
}

// Reconcile writes the aggregated status of one quota.
func (r *StatusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	quota := &policyv1alpha1.FederatedResourceQuota{}
	if err := r.Client.Get(ctx, req.NamespacedName, quota); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !quota.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	var works workv1alpha1.WorkList
	if err := r.Client.List(ctx, &works, client.MatchingLabels{
		policyv1alpha1.FederatedResourceQuotaNamespaceLabel: quota.Namespace,
		policyv1alpha1.FederatedResourceQuotaNameLabel:      quota.Name,
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the quota's Works: %w", err)
	}
	aggregated, err := aggregate(works.Items)
	if err != nil {
		r.Recorder.Eventf(quota, nil, corev1.EventTypeWarning, flotillaevents.ReasonAggregateStatusFailed, actionCollect, "%s", err.Error())
		return ctrl.Result{}, err
	}
	next := quota.DeepCopy()
	next.Status.AggregatedStatus = aggregated
	if !r.Enforcement {
		next.Status.Overall = quota.Spec.Overall
		next.Status.OverallUsed = sumUsed(aggregated)
	}
	if equality.Semantic.DeepEqual(quota.Status, next.Status) {
		return ctrl.Result{}, nil
	}
	// A merge patch of the fields that changed only: with enforcement,
	// overall and overallUsed are written by another controller.
	if err := r.Client.Status().Patch(ctx, next, client.MergeFrom(quota)); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		err = fmt.Errorf("writing the status: %w", err)
		r.Recorder.Eventf(quota, nil, corev1.EventTypeWarning, flotillaevents.ReasonAggregateStatusFailed, actionCollect, "%s", err.Error())
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(quota, nil, corev1.EventTypeNormal, flotillaevents.ReasonAggregateStatusSucceed, actionCollect,
		"Collect status of FederatedResourceQuota(%s) succeed.", req.NamespacedName)
	return ctrl.Result{}, nil
}

// aggregate reads the ResourceQuota status of each applied Work, sorted by
// cluster. A Work not applied yet, or whose member status has not come
// back yet, is left out until it has.
func aggregate(works []workv1alpha1.Work) ([]policyv1alpha1.ClusterQuotaStatus, error) {
	var out []policyv1alpha1.ClusterQuotaStatus
	var errs []error
	for i := range works {
		w := &works[i]
		if !w.DeletionTimestamp.IsZero() || !meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied) ||
			len(w.Status.ManifestStatuses) == 0 {
			continue
		}
		cluster, ok := names.ClusterOfExecutionSpace(w.Namespace)
		if !ok {
			continue
		}
		raw, err := workcache.StatusJSON(&w.Status.ManifestStatuses[0])
		if err != nil || raw == nil {
			errs = append(errs, err)
			continue
		}
		var status corev1.ResourceQuotaStatus
		if err := json.Unmarshal(raw, &status); err != nil {
			errs = append(errs, fmt.Errorf("reading the ResourceQuota status of Work %s/%s: %w", w.Namespace, w.Name, err))
			continue
		}
		out = append(out, policyv1alpha1.ClusterQuotaStatus{ClusterName: cluster, ResourceQuotaStatus: status})
	}
	slices.SortFunc(out, func(a, b policyv1alpha1.ClusterQuotaStatus) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	return out, errors.Join(errs...)
}

// sumUsed is the usage of all members together.
func sumUsed(aggregated []policyv1alpha1.ClusterQuotaStatus) corev1.ResourceList {
	used := corev1.ResourceList{}
	for _, s := range aggregated {
		for name, q := range s.Used {
			total := used[name]
			total.Add(q)
			used[name] = total
		}
	}
	return used
}
