package propagationpolicy

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/validation"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/validate-propagationpolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=propagationpolicies,verbs=create;update,versions=*,name=propagationpolicy.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3
// +kubebuilder:webhook:path=/validate-clusterpropagationpolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=clusterpropagationpolicies,verbs=create;update,versions=*,name=clusterpropagationpolicy.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// Validator is the validating handler of one policy kind.
type Validator struct {
	kind    kind
	decoder admission.Decoder
}

// NewPropagationPolicyValidator serves /validate-propagationpolicy.
func NewPropagationPolicyValidator(decoder admission.Decoder) *Validator {
	return &Validator{kind: propagationPolicy, decoder: decoder}
}

// NewClusterPropagationPolicyValidator serves
// /validate-clusterpropagationpolicy.
func NewClusterPropagationPolicyValidator(decoder admission.Decoder) *Validator {
	return &Validator{kind: clusterPropagationPolicy, decoder: decoder}
}

// Handle refuses an invalid policy, naming each field at fault.
func (h *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	obj, spec := h.kind.newObj()
	if err := h.decoder.Decode(req, obj); err != nil {
		return verdict.BadRequest(err)
	}
	errs := h.validate(obj, spec)
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old, oldSpec := h.kind.newObj()
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return verdict.BadRequest(err)
		}
		errs = append(errs, h.validateUpdate(obj, spec, old, oldSpec)...)
	}
	return verdict.Invalid(h.kind.gk, obj.GetName(), errs)
}

func (h *Validator) validate(obj client.Object, spec *policyv1alpha1.PropagationSpec) field.ErrorList {
	var errs field.ErrorList
	if len(obj.GetName()) > validation.PolicyNameMaxLength {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), obj.GetName(), validation.PolicyNameMaxLength))
	}
	if obj.GetLabels()[h.kind.idLabel] == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "labels").Key(h.kind.idLabel),
			"set by the defaulting webhook on creation"))
	}
	return append(errs, validation.PropagationSpec(spec, field.NewPath("spec"))...)
}

func (h *Validator) validateUpdate(obj client.Object, spec *policyv1alpha1.PropagationSpec, old client.Object, oldSpec *policyv1alpha1.PropagationSpec) field.ErrorList {
	var errs field.ErrorList
	if spec.SchedulerName != oldSpec.SchedulerName {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "schedulerName"), "may not be changed"))
	}
	// A policy created before the webhook was in place gets its id later
	// (the detector gives one); once given it never changes.
	if was := old.GetLabels()[h.kind.idLabel]; was != "" && obj.GetLabels()[h.kind.idLabel] != was {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "labels").Key(h.kind.idLabel),
			obj.GetLabels()[h.kind.idLabel], "is immutable once set"))
	}
	return errs
}
