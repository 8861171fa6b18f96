package detector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/uuid"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Names of the controllers that give policies their permanent ids.
const (
	PropagationPolicyIDControllerName        = "propagation-policy-id"
	ClusterPropagationPolicyIDControllerName = "cluster-propagation-policy-id"
)

// policyIDReconciler gives a policy of one kind its permanent id when it
// has none, as Karmada's webhook does on creation: templates and bindings
// record their claim by that id, so the path works without the webhook.
type policyIDReconciler struct {
	client  client.Client
	newObj  func() client.Object
	idLabel string
}

// setupPolicyIDControllers registers the controllers of both policy kinds.
func setupPolicyIDControllers(mgr ctrl.Manager) error {
	for _, r := range []struct {
		name string
		rec  *policyIDReconciler
	}{
		{PropagationPolicyIDControllerName, &policyIDReconciler{
			client:  mgr.GetClient(),
			newObj:  func() client.Object { return &policyv1alpha1.PropagationPolicy{} },
			idLabel: policyv1alpha1.PropagationPolicyPermanentIDLabel,
		}},
		{ClusterPropagationPolicyIDControllerName, &policyIDReconciler{
			client:  mgr.GetClient(),
			newObj:  func() client.Object { return &policyv1alpha1.ClusterPropagationPolicy{} },
			idLabel: policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel,
		}},
	} {
		missing := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[r.rec.idLabel] == "" })
		err := ctrl.NewControllerManagedBy(mgr).
			Named(r.name).
			For(r.rec.newObj(), builder.WithPredicates(missing)).
			Complete(r.rec)
		if err != nil {
			return fmt.Errorf("setting up %s: %w", r.name, err)
		}
	}
	return nil
}

// +kubebuilder:rbac:groups=policy.karmada.io,resources=propagationpolicies;clusterpropagationpolicies,verbs=get;list;watch;patch

// Reconcile labels the policy with a new permanent id if it has none.
func (r *policyIDReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObj()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetLabels()[r.idLabel] != "" || !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	base := obj.DeepCopyObject().(client.Object)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[r.idLabel] = string(uuid.NewUUID())
	obj.SetLabels(labels)
	// The optimistic lock keeps a reconcile working from a stale cache from
	// replacing an id already given.
	err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		// The change that won comes back as an event, and with it this
		// policy if it still has no id.
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Gave the policy its permanent id", "id", labels[r.idLabel])
	return ctrl.Result{}, nil
}
