// Package clustertaintpolicy validates ClusterTaintPolicies
// (/validate-clustertaintpolicy): well-formed taints and conditions, and no
// taint (key and effect) managed by two policies, which would add and
// remove it in turn.
package clustertaintpolicy

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/validation"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/validate-clustertaintpolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=clustertaintpolicies,verbs=create;update,versions=*,name=clustertaintpolicy.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// Validator serves /validate-clustertaintpolicy. It reads the other
// policies through reader (the manager's cache).
type Validator struct {
	decoder        admission.Decoder
	reader         client.Reader
	allowNoExecute bool
}

// NewValidator returns the ClusterTaintPolicy validating handler;
// allowNoExecute (--allow-no-execute-taint-policy) lets policies add
// NoExecute taints, which evict what does not tolerate them.
func NewValidator(decoder admission.Decoder, reader client.Reader, allowNoExecute bool) *Validator {
	return &Validator{decoder: decoder, reader: reader, allowNoExecute: allowNoExecute}
}

// Handle refuses an invalid policy, naming each field at fault.
func (h *Validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	policy := &policyv1alpha1.ClusterTaintPolicy{}
	if err := h.decoder.Decode(req, policy); err != nil {
		return verdict.BadRequest(err)
	}
	errs := Validate(&policy.Spec, field.NewPath("spec"))
	if !h.allowNoExecute {
		errs = append(errs, noExecute(policy.Spec.Taints, field.NewPath("spec", "taints"))...)
	}
	var others policyv1alpha1.ClusterTaintPolicyList
	if err := h.reader.List(ctx, &others); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("listing ClusterTaintPolicies: %w", err))
	}
	errs = append(errs, conflicts(policy, others.Items, field.NewPath("spec", "taints"))...)
	return verdict.Invalid(policyv1alpha1.GroupVersion.WithKind("ClusterTaintPolicy").GroupKind(), policy.Name, errs)
}

// Validate checks a policy's spec on its own.
func Validate(spec *policyv1alpha1.ClusterTaintPolicySpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validation.ClusterAffinity(spec.TargetClusters, path.Child("targetClusters"))...)
	if len(spec.AddOnConditions) == 0 && len(spec.RemoveOnConditions) == 0 {
		errs = append(errs, field.Required(path.Child("addOnConditions"), "at least one of addOnConditions and removeOnConditions is required"))
	}
	errs = append(errs, conditions(spec.AddOnConditions, path.Child("addOnConditions"))...)
	errs = append(errs, conditions(spec.RemoveOnConditions, path.Child("removeOnConditions"))...)
	type taintKey struct {
		key    string
		effect corev1.TaintEffect
	}
	seen := map[taintKey]bool{}
	for i, t := range spec.Taints {
		p := path.Child("taints").Index(i)
		for _, msg := range utilvalidation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
		for _, msg := range utilvalidation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect,
				[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute}))
		}
		k := taintKey{t.Key, t.Effect}
		if seen[k] {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("%s:%s", t.Key, t.Effect)))
		}
		seen[k] = true
	}
	return errs
}

// noExecute refuses NoExecute taints: applied to a cluster, they evict
// every workload that does not tolerate them, so an administrator must
// allow them explicitly, as in Karmada.
func noExecute(taints []policyv1alpha1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			errs = append(errs, field.Forbidden(path.Index(i).Child("effect"),
				"taints with effect NoExecute evict the workloads that do not tolerate them; the webhook allows them only with --allow-no-execute-taint-policy"))
		}
	}
	return errs
}

func conditions(cs []policyv1alpha1.MatchCondition, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		p := path.Index(i)
		if c.ConditionType == "" {
			errs = append(errs, field.Required(p.Child("conditionType"), ""))
		}
		if c.Operator != policyv1alpha1.MatchConditionOpIn && c.Operator != policyv1alpha1.MatchConditionOpNotIn {
			errs = append(errs, field.NotSupported(p.Child("operator"), c.Operator,
				[]policyv1alpha1.MatchConditionOperator{policyv1alpha1.MatchConditionOpIn, policyv1alpha1.MatchConditionOpNotIn}))
		}
		if len(c.StatusValues) == 0 {
			errs = append(errs, field.Required(p.Child("statusValues"), ""))
		}
		for j, v := range c.StatusValues {
			if v != metav1.ConditionTrue && v != metav1.ConditionFalse && v != metav1.ConditionUnknown {
				errs = append(errs, field.NotSupported(p.Child("statusValues").Index(j), v,
					[]metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}))
			}
		}
	}
	return errs
}

// conflicts names each taint of policy that another policy also manages.
func conflicts(policy *policyv1alpha1.ClusterTaintPolicy, others []policyv1alpha1.ClusterTaintPolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range policy.Spec.Taints {
		for _, other := range others {
			if other.Name == policy.Name {
				continue
			}
			for _, o := range other.Spec.Taints {
				if o.Key == t.Key && o.Effect == t.Effect {
					errs = append(errs, field.Invalid(path.Index(i), fmt.Sprintf("%s:%s", t.Key, t.Effect),
						fmt.Sprintf("already managed by ClusterTaintPolicy %s", other.Name)))
				}
			}
		}
	}
	return errs
}
