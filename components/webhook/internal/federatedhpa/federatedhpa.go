// Package federatedhpa defaults and validates FederatedHPAs
// (/mutate-federatedhpa, /validate-federatedhpa) with the rules Kubernetes
// applies to a HorizontalPodAutoscaler, as Karmada does: a FederatedHPA is
// an autoscaling/v2 HorizontalPodAutoscaler whose pods run in many clusters.
package federatedhpa

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/mutate-federatedhpa,mutating=true,failurePolicy=fail,sideEffects=None,groups=autoscaling.karmada.io,resources=federatedhpas,verbs=create;update,versions=*,name=federatedhpa.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3
// +kubebuilder:webhook:path=/validate-federatedhpa,mutating=false,failurePolicy=fail,sideEffects=None,groups=autoscaling.karmada.io,resources=federatedhpas,verbs=create;update,versions=*,name=federatedhpa.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// Defaulter serves /mutate-federatedhpa.
type Defaulter struct {
	decoder admission.Decoder
}

// NewDefaulter returns the FederatedHPA defaulting handler.
func NewDefaulter(decoder admission.Decoder) *Defaulter { return &Defaulter{decoder: decoder} }

// Handle answers with the patch that defaults the FederatedHPA.
func (h *Defaulter) Handle(_ context.Context, req admission.Request) admission.Response {
	fhpa := &autoscalingv1alpha1.FederatedHPA{}
	if err := h.decoder.Decode(req, fhpa); err != nil {
		return verdict.BadRequest(err)
	}
	Default(&fhpa.Spec)
	// Only spec is defaulted; the status type writes fields without
	// omitempty that the request may not have.
	return verdict.PatchFields(req, fhpa, "spec")
}

// Validator serves /validate-federatedhpa.
type Validator struct {
	decoder admission.Decoder
}

// NewValidator returns the FederatedHPA validating handler.
func NewValidator(decoder admission.Decoder) *Validator { return &Validator{decoder: decoder} }

// Handle refuses an invalid FederatedHPA, naming each field at fault.
func (h *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	fhpa := &autoscalingv1alpha1.FederatedHPA{}
	if err := h.decoder.Decode(req, fhpa); err != nil {
		return verdict.BadRequest(err)
	}
	return verdict.Invalid(autoscalingv1alpha1.GroupVersion.WithKind(autoscalingv1alpha1.FederatedHPAKind).GroupKind(), fhpa.Name,
		Validate(&fhpa.Spec, field.NewPath("spec")))
}
