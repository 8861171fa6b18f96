// Package deletionprotection refuses the deletion of objects labelled
// resourcetemplate.karmada.io/deletion-protected=Always
// (/validate-resourcedeletionprotection). The webhook configuration sends
// it only DELETE requests of objects carrying the label, of every kind.
package deletionprotection

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/validate-resourcedeletionprotection,mutating=false,failurePolicy=fail,sideEffects=None,groups=*,resources=*,verbs=delete,versions=*,name=resourcedeletionprotection.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3,patch=`{"objectSelector":{"matchExpressions":[{"key":"resourcetemplate.karmada.io/deletion-protected","operator":"Exists"}]}}`

// Always is the label value that protects an object.
const Always = "Always"

// Validator serves /validate-resourcedeletionprotection.
type Validator struct{}

// NewValidator returns the deletion protection handler.
func NewValidator() *Validator { return &Validator{} }

// Handle refuses to delete a protected object; any other request passes.
func (Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Delete || len(req.OldObject.Raw) == 0 {
		return admission.Allowed("")
	}
	var obj metav1.PartialObjectMetadata
	if err := json.Unmarshal(req.OldObject.Raw, &obj); err != nil {
		return verdict.BadRequest(err)
	}
	if obj.Labels[workv1alpha1.DeletionProtectionLabel] != Always {
		return admission.Allowed("")
	}
	resource := schema.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}
	return verdict.Forbidden(resource, obj.Name, fmt.Sprintf(
		"the object is protected from deletion; remove the label %s=%s first", workv1alpha1.DeletionProtectionLabel, Always))
}
