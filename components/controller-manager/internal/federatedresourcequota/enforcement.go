package federatedresourcequota

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/federatedquota"
)

// DefaultResyncPeriod is Karmada's --federated-resource-quota-sync-period.
const DefaultResyncPeriod = 5 * time.Minute

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings,verbs=get;list;watch

// EnforcementReconciler writes status.overall (the spec's) and
// status.overallUsed of a quota: what the scheduled replicas of every
// ResourceBinding of its namespace request, counted against the quota's
// limits. It runs with the FederatedQuotaEnforcement gate; the webhook
// refuses a binding whose placement would take overallUsed over overall.
//
// Usage follows the bindings: a binding created, placed, scaled or deleted
// recalculates the quotas of its namespace, and every quota is recalculated
// each ResyncPeriod besides, as in Karmada.
type EnforcementReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// ResyncPeriod is how often every quota is recalculated regardless;
	// DefaultResyncPeriod when zero.
	ResyncPeriod time.Duration
}

// SetupWithManager watches quotas whose limits change and bindings whose
// usage changes.
func (r *EnforcementReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("federated-resource-quota-enforcement controller: Client and Recorder are required")
	}
	if r.ResyncPeriod <= 0 {
		r.ResyncPeriod = DefaultResyncPeriod
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(EnforcementControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(r.quotasOfNamespace), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				o, okOld := e.ObjectOld.(*workv1alpha2.ResourceBinding)
				n, okNew := e.ObjectNew.(*workv1alpha2.ResourceBinding)
				return !okOld || !okNew || !equality.Semantic.DeepEqual(federatedquota.BindingUsage(&o.Spec), federatedquota.BindingUsage(&n.Spec))
			},
		})).
		Complete(r)
}

// quotasOfNamespace maps a binding to the quotas of its namespace.
func (r *EnforcementReconciler) quotasOfNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var quotas policyv1alpha1.FederatedResourceQuotaList
	if err := r.Client.List(ctx, &quotas, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing FederatedResourceQuotas for a binding change", "namespace", o.GetNamespace())
		return nil
	}
	out := make([]reconcile.Request, 0, len(quotas.Items))
	for i := range quotas.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&quotas.Items[i])})
	}
	return out
}

// Reconcile recalculates one quota's overall usage.
func (r *EnforcementReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	quota := &policyv1alpha1.FederatedResourceQuota{}
	if err := r.Client.Get(ctx, req.NamespacedName, quota); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !quota.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	var bindings workv1alpha2.ResourceBindingList
	if err := r.Client.List(ctx, &bindings, client.InNamespace(quota.Namespace)); err != nil {
		err = fmt.Errorf("listing the ResourceBindings of namespace %s: %w", quota.Namespace, err)
		r.Recorder.Eventf(quota, nil, corev1.EventTypeWarning, flotillaevents.ReasonCollectOverallStatusFailed, actionCollect, "%s", err.Error())
		return ctrl.Result{}, err
	}
	next := quota.DeepCopy()
	next.Status.Overall = quota.Spec.Overall
	next.Status.OverallUsed = federatedquota.Used(bindings.Items, quota.Spec.Overall)
	if equality.Semantic.DeepEqual(quota.Status, next.Status) {
		return ctrl.Result{RequeueAfter: r.ResyncPeriod}, nil
	}
	// Only overall and overallUsed: aggregatedStatus is the status
	// controller's.
	if err := r.Client.Status().Patch(ctx, next, client.MergeFrom(quota)); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		err = fmt.Errorf("writing the status: %w", err)
		r.Recorder.Eventf(quota, nil, corev1.EventTypeWarning, flotillaevents.ReasonCollectOverallStatusFailed, actionCollect, "%s", err.Error())
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(quota, nil, corev1.EventTypeNormal, flotillaevents.ReasonCollectOverallStatusSucceed, actionCollect,
		"Collect status of FederatedResourceQuota(%s) succeed.", req.NamespacedName)
	return ctrl.Result{RequeueAfter: r.ResyncPeriod}, nil
}
