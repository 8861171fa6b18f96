package deletionprotection

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

func deployment(labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps", Labels: labels}}
}

func TestValidate(t *testing.T) {
	h := NewValidator()
	protected := deployment(map[string]string{"resourcetemplate.karmada.io/deletion-protected": "Always"})
	resp := h.Handle(t.Context(), admissiontest.Delete(protected))
	if resp.Allowed || resp.Result.Code != 403 || resp.Result.Reason != metav1.StatusReasonForbidden {
		t.Errorf("deleting a protected object: %+v", resp.Result)
	}
	for name, obj := range map[string]*appsv1.Deployment{
		"unlabelled":         deployment(nil),
		"other label value":  deployment(map[string]string{"resourcetemplate.karmada.io/deletion-protected": "Never"}),
		"unrelated labelled": deployment(map[string]string{"app": "nginx"}),
	} {
		if resp := h.Handle(t.Context(), admissiontest.Delete(obj)); !resp.Allowed {
			t.Errorf("%s: deletion refused: %s", name, resp.Result.Message)
		}
	}
	// Changing a protected object is not this handler's business.
	if resp := h.Handle(t.Context(), admissiontest.Update(protected, protected)); !resp.Allowed {
		t.Error("update of a protected object refused")
	}
}
