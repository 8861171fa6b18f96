// Package clustertaintpolicy is the cluster-taint-policy-controller: it adds
// and removes the taints of ClusterTaintPolicies on the Clusters they
// target, as the Clusters' status conditions say.
package clustertaintpolicy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/flotilla-io/flotilla/internal/affinity"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

// ControllerName is Karmada's name for this controller, used for events
// and metrics.
const ControllerName = "cluster-taint-policy-controller"

// actionTaint is the action of the events this controller records.
const actionTaint = "Taint"

// conflictRetry: a Cluster's taints written meanwhile by another controller
// (the cluster controller's) are read again soon.
const conflictRetry = 100 * time.Millisecond

// +kubebuilder:rbac:groups=policy.karmada.io,resources=clustertaintpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconciler reconciles one Cluster against every ClusterTaintPolicy.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Now stamps the taints added; time.Now when nil.
	Now func() metav1.Time
}

// SetupWithManager watches Clusters, whose condition changes move taints,
// and ClusterTaintPolicies, whose spec changes re-evaluate the Clusters they
// target. A deleted policy leaves its taints where they are, as Karmada's
// does: nothing is re-evaluated.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("cluster-taint-policy controller: Client and Recorder are required")
	}
	if r.Now == nil {
		r.Now = metav1.Now
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				o, okOld := e.ObjectOld.(*clusterv1alpha1.Cluster)
				n, okNew := e.ObjectNew.(*clusterv1alpha1.Cluster)
				if !okOld || !okNew {
					return true
				}
				// Heartbeats move lastTransitionTime-free fields only when
				// a condition changes; the rest of the status is not read.
				return !conditionsEqual(o.Status.Conditions, n.Status.Conditions) || o.Generation != n.Generation
			},
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Watches(&policyv1alpha1.ClusterTaintPolicy{}, handler.EnqueueRequestsFromMapFunc(r.targetsOf),
			builder.WithPredicates(predicate.Funcs{
				UpdateFunc: func(e event.UpdateEvent) bool { return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() },
				DeleteFunc: func(event.DeleteEvent) bool { return false },
			})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(r)
}

// conditionsEqual compares what the policies match on: type and status.
func conditionsEqual(a, b []metav1.Condition) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.Condition) bool { return x.Type == y.Type && x.Status == y.Status })
}

// targetsOf enqueues the Clusters a policy targets.
func (r *Reconciler) targetsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	policy, ok := obj.(*policyv1alpha1.ClusterTaintPolicy)
	if !ok {
		return nil
	}
	m, err := affinity.Compile(policy.Spec.TargetClusters)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "ClusterTaintPolicy has an invalid targetClusters; ignoring it", "policy", policy.Name)
		return nil
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Clusters for a ClusterTaintPolicy", "policy", policy.Name)
		return nil
	}
	var reqs []reconcile.Request
	for i := range clusters.Items {
		if m.Matches(&clusters.Items[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: clusters.Items[i].Name}})
		}
	}
	return reqs
}

// Reconcile applies every policy targeting the Cluster, oldest first, and
// writes the taints once if they changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	policies := &policyv1alpha1.ClusterTaintPolicyList{}
	if err := r.Client.List(ctx, policies); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing ClusterTaintPolicies: %w", err)
	}

	taints, err := Taints(cluster, policies.Items, r.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	if equality.Semantic.DeepEqual(taints, cluster.Spec.Taints) {
		return ctrl.Result{}, nil
	}
	base := cluster.DeepCopy()
	cluster.Spec.Taints = taints
	// A merge patch replaces the whole list: the lock keeps the taints
	// another controller (the cluster controller's not-ready ones) wrote
	// meanwhile; a conflict comes back here with them.
	if err := r.Client.Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, flotillaevents.ReasonTaintClusterFailed, actionTaint,
			"Update Cluster(%s) with taints(%s) failed: %v", cluster.Name, describe(taints), err)
		return ctrl.Result{}, fmt.Errorf("writing the taints of Cluster %s: %w", cluster.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Updated cluster taints", "taints", describe(taints))
	r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, flotillaevents.ReasonTaintClusterSucceed, actionTaint,
		"Update Cluster(%s) with taints(%s) succeed", cluster.Name, describe(taints))
	return ctrl.Result{}, nil
}

// Taints returns the taints cluster should have after every policy that
// targets it is applied, in creation order (then by name) so that
// conflicting policies always end the same way. A policy's
// addOnConditions are applied before its removeOnConditions. Taints no
// policy acts on are kept as they are.
func Taints(cluster *clusterv1alpha1.Cluster, policies []policyv1alpha1.ClusterTaintPolicy, now metav1.Time) ([]corev1.Taint, error) {
	ordered := slices.Clone(policies)
	slices.SortStableFunc(ordered, func(a, b policyv1alpha1.ClusterTaintPolicy) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	taints := slices.Clone(cluster.Spec.Taints)
	var errs []error
	for i := range ordered {
		p := &ordered[i]
		m, err := affinity.Compile(p.Spec.TargetClusters)
		if err != nil {
			errs = append(errs, fmt.Errorf("ClusterTaintPolicy %s: spec.targetClusters: %w", p.Name, err))
			continue
		}
		if !m.Matches(cluster) {
			continue
		}
		if Matches(cluster.Status.Conditions, p.Spec.AddOnConditions) {
			taints = add(taints, p.Spec.Taints, now)
		}
		if Matches(cluster.Status.Conditions, p.Spec.RemoveOnConditions) {
			taints = remove(taints, p.Spec.Taints)
		}
	}
	// A bad policy is reported; the others still apply.
	return taints, errors.Join(errs...)
}

// Matches reports whether conditions meet every match condition. No match
// conditions never match, and neither does one whose condition type the
// cluster does not report, whatever its operator: a condition nobody has
// set says nothing about the cluster.
func Matches(conditions []metav1.Condition, match []policyv1alpha1.MatchCondition) bool {
	if len(match) == 0 {
		return false
	}
	for _, mc := range match {
		cond := findCondition(conditions, mc.ConditionType)
		if cond == nil {
			return false
		}
		in := slices.Contains(mc.StatusValues, cond.Status)
		switch mc.Operator {
		case policyv1alpha1.MatchConditionOpIn:
			if !in {
				return false
			}
		case policyv1alpha1.MatchConditionOpNotIn:
			if in {
				return false
			}
		default:
			// The CRD's enum refuses other operators.
			return false
		}
	}
	return true
}

func findCondition(conditions []metav1.Condition, t string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// add appends the policy taints that are missing (by key and effect, the
// identity of a taint in spec.taints), stamped with now.
func add(taints []corev1.Taint, policy []policyv1alpha1.Taint, now metav1.Time) []corev1.Taint {
	for _, p := range policy {
		if slices.ContainsFunc(taints, sameTaint(p)) {
			continue
		}
		taints = append(taints, corev1.Taint{Key: p.Key, Value: p.Value, Effect: p.Effect, TimeAdded: &now})
	}
	return taints
}

// remove drops the policy taints.
func remove(taints []corev1.Taint, policy []policyv1alpha1.Taint) []corev1.Taint {
	for _, p := range policy {
		taints = slices.DeleteFunc(taints, sameTaint(p))
	}
	return taints
}

func sameTaint(p policyv1alpha1.Taint) func(corev1.Taint) bool {
	return func(t corev1.Taint) bool { return t.Key == p.Key && t.Effect == p.Effect }
}

// describe formats taints as kubectl does: key=value:Effect.
func describe(taints []corev1.Taint) string {
	s := make([]string, len(taints))
	for i, t := range taints {
		s[i] = t.ToString()
	}
	return strings.Join(s, ",")
}
