// Package overridepolicy defaults OverridePolicies and validates
// OverridePolicies and ClusterOverridePolicies (/mutate-overridepolicy,
// /validate-overridepolicy, /validate-clusteroverridepolicy).
package overridepolicy

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/validation"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/mutate-overridepolicy,mutating=true,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=overridepolicies,verbs=create;update,versions=*,name=overridepolicy.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3
// +kubebuilder:webhook:path=/validate-overridepolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=overridepolicies,verbs=create;update,versions=*,name=overridepolicy.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3
// +kubebuilder:webhook:path=/validate-clusteroverridepolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=clusteroverridepolicies,verbs=create;update,versions=*,name=clusteroverridepolicy.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// Defaulter serves /mutate-overridepolicy: resource selectors without a
// namespace get the policy's.
type Defaulter struct {
	decoder admission.Decoder
}

// NewDefaulter returns the OverridePolicy defaulting handler.
func NewDefaulter(decoder admission.Decoder) *Defaulter { return &Defaulter{decoder: decoder} }

// Handle answers with the patch that defaults the policy.
func (h *Defaulter) Handle(_ context.Context, req admission.Request) admission.Response {
	policy := &policyv1alpha1.OverridePolicy{}
	if err := h.decoder.Decode(req, policy); err != nil {
		return verdict.BadRequest(err)
	}
	for i := range policy.Spec.ResourceSelectors {
		if policy.Spec.ResourceSelectors[i].Namespace == "" {
			// The request carries the namespace even when the object, on
			// create, does not yet.
			policy.Spec.ResourceSelectors[i].Namespace = req.Namespace
		}
	}
	return verdict.Patch(req, policy)
}

// Validator serves /validate-overridepolicy or
// /validate-clusteroverridepolicy.
type Validator struct {
	decoder admission.Decoder
	gk      schema.GroupKind
	newObj  func() (client.Object, *policyv1alpha1.OverrideSpec)
}

// NewValidator returns the OverridePolicy validating handler.
func NewValidator(decoder admission.Decoder) *Validator {
	return &Validator{decoder: decoder, gk: policyv1alpha1.GroupVersion.WithKind("OverridePolicy").GroupKind(),
		newObj: func() (client.Object, *policyv1alpha1.OverrideSpec) {
			p := &policyv1alpha1.OverridePolicy{}
			return p, &p.Spec
		}}
}

// NewClusterValidator returns the ClusterOverridePolicy validating handler.
func NewClusterValidator(decoder admission.Decoder) *Validator {
	return &Validator{decoder: decoder, gk: policyv1alpha1.GroupVersion.WithKind("ClusterOverridePolicy").GroupKind(),
		newObj: func() (client.Object, *policyv1alpha1.OverrideSpec) {
			p := &policyv1alpha1.ClusterOverridePolicy{}
			return p, &p.Spec
		}}
}

// Handle refuses an invalid policy, naming each field at fault.
func (h *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	obj, spec := h.newObj()
	if err := h.decoder.Decode(req, obj); err != nil {
		return verdict.BadRequest(err)
	}
	return verdict.Invalid(h.gk, obj.GetName(), validation.OverrideSpec(spec, field.NewPath("spec")))
}
