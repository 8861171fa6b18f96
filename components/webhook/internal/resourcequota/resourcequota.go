// Package resourcequota validates FederatedResourceQuotas
// (/validate-federatedresourcequota): resource names and quantities, and
// static assignments that fit in the overall limit.
package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/validate-federatedresourcequota,mutating=false,failurePolicy=fail,sideEffects=None,groups=policy.karmada.io,resources=federatedresourcequotas,verbs=create;update,versions=*,name=federatedresourcequota.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3

// clusterNameMaxLength bounds member cluster names, as Karmada does: the
// execution namespace karmada-es-<name> must stay a valid namespace name.
const clusterNameMaxLength = 48

// Validator serves /validate-federatedresourcequota.
type Validator struct {
	decoder admission.Decoder
}

// NewValidator returns the FederatedResourceQuota validating handler.
func NewValidator(decoder admission.Decoder) *Validator { return &Validator{decoder: decoder} }

// Handle refuses an invalid quota, naming each field at fault.
func (h *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	quota := &policyv1alpha1.FederatedResourceQuota{}
	if err := h.decoder.Decode(req, quota); err != nil {
		return verdict.BadRequest(err)
	}
	return verdict.Invalid(policyv1alpha1.GroupVersion.WithKind("FederatedResourceQuota").GroupKind(), quota.Name,
		Validate(&quota.Spec, field.NewPath("spec")))
}

// Validate checks a quota's spec.
func Validate(spec *policyv1alpha1.FederatedResourceQuotaSpec, path *field.Path) field.ErrorList {
	errs := resourceList(spec.Overall, path.Child("overall"))
	assigned := corev1.ResourceList{}
	seen := map[string]bool{}
	for i, a := range spec.StaticAssignments {
		p := path.Child("staticAssignments").Index(i)
		errs = append(errs, clusterName(a.ClusterName, p.Child("clusterName"))...)
		if seen[a.ClusterName] {
			errs = append(errs, field.Duplicate(p.Child("clusterName"), a.ClusterName))
		}
		seen[a.ClusterName] = true
		errs = append(errs, resourceList(a.Hard, p.Child("hard"))...)
		for name, q := range a.Hard {
			if _, ok := spec.Overall[name]; !ok {
				errs = append(errs, field.Invalid(p.Child("hard").Key(string(name)), q.String(), "has no overall limit"))
				continue
			}
			sum := assigned[name]
			sum.Add(q)
			assigned[name] = sum
		}
	}
	for name, limit := range spec.Overall {
		if sum, ok := assigned[name]; ok && limit.Cmp(sum) < 0 {
			errs = append(errs, field.Invalid(path.Child("overall").Key(string(name)), limit.String(),
				fmt.Sprintf("is less than the %s assigned to clusters", sum.String())))
		}
	}
	return errs
}

func clusterName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(name) > clusterNameMaxLength {
		errs = append(errs, field.TooLong(path, name, clusterNameMaxLength))
	}
	return errs
}

// resourceList: qualified resource names and quantities not below zero.
func resourceList(l corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range l {
		p := path.Key(string(name))
		for _, msg := range utilvalidation.IsQualifiedName(string(name)) {
			errs = append(errs, field.Invalid(p, string(name), msg))
		}
		if q.Cmp(resource.Quantity{}) < 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}
