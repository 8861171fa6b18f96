// Package work defaults Works (/mutate-work): the Work gets its permanent
// id, and every manifest the labels and annotations that tie the member
// object to the Work.
package work

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/mutate-work,mutating=true,failurePolicy=fail,sideEffects=None,groups=work.karmada.io,resources=works,verbs=create;update,versions=*,name=work.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3,patch=`{"matchConditions":[{"name":"not-defaulted","expression":"!has(object.metadata.labels) || !('work.karmada.io/permanent-id' in object.metadata.labels) || (has(object.spec) && has(object.spec.workload) && has(object.spec.workload.manifests) && object.spec.workload.manifests.exists(m, !has(m.metadata) || !has(m.metadata.labels) || !('work.karmada.io/permanent-id' in m.metadata.labels) || m.metadata.labels['work.karmada.io/permanent-id'] != object.metadata.labels['work.karmada.io/permanent-id'] || !has(m.metadata.annotations) || !('work.karmada.io/namespace' in m.metadata.annotations) || m.metadata.annotations['work.karmada.io/namespace'] != object.metadata.namespace || !('work.karmada.io/name' in m.metadata.annotations) || m.metadata.annotations['work.karmada.io/name'] != object.metadata.name))"}]}`

// Defaulter serves /mutate-work. The binding controller writes the same
// labels and annotations itself (and prunes the manifests while rendering
// them), so a Work it wrote comes through unchanged and the controller sees
// no difference to write again; Works written by anyone else get them here.
// The API server calls it only for a Work that lacks one of them
// (matchConditions): a webhook call costs it more than the rest of the write.
type Defaulter struct {
	decoder admission.Decoder
}

// NewDefaulter returns the Work defaulting handler.
func NewDefaulter(decoder admission.Decoder) *Defaulter { return &Defaulter{decoder: decoder} }

// Handle answers with the patch that defaults the Work.
func (h *Defaulter) Handle(_ context.Context, req admission.Request) admission.Response {
	work := &workv1alpha1.Work{}
	if err := h.decoder.Decode(req, work); err != nil {
		return verdict.BadRequest(err)
	}
	previous := ""
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := &workv1alpha1.Work{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return verdict.BadRequest(err)
		}
		previous = old.Labels[workv1alpha1.WorkPermanentIDLabel]
	}
	if err := Default(work, previous); err != nil {
		return verdict.BadRequest(err)
	}
	return verdict.Patch(req, work)
}

// Default gives work its permanent id (previous when set, else a new one)
// unless it has one, and labels and annotates each manifest with the Work's
// id, namespace and name. A manifest that already carries them keeps its
// bytes.
func Default(work *workv1alpha1.Work, previous string) error {
	id := work.Labels[workv1alpha1.WorkPermanentIDLabel]
	if id == "" {
		id = previous
		if id == "" {
			id = string(uuid.NewUUID())
		}
		if work.Labels == nil {
			work.Labels = map[string]string{}
		}
		work.Labels[workv1alpha1.WorkPermanentIDLabel] = id
	}
	for i := range work.Spec.Workload.Manifests {
		m := &work.Spec.Workload.Manifests[i]
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(m.Raw, &obj.Object); err != nil {
			return fmt.Errorf("spec.workload.manifests[%d]: %w", i, err)
		}
		changed := setLabel(obj, workv1alpha1.WorkPermanentIDLabel, id)
		changed = setAnnotation(obj, workv1alpha1.WorkNamespaceAnnotation, work.Namespace) || changed
		changed = setAnnotation(obj, workv1alpha1.WorkNameAnnotation, work.Name) || changed
		if !changed {
			continue
		}
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("spec.workload.manifests[%d]: %w", i, err)
		}
		m.Raw, m.Object = raw, nil
	}
	return nil
}

func setLabel(obj *unstructured.Unstructured, key, value string) bool {
	labels := obj.GetLabels()
	if labels[key] == value {
		return false
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	obj.SetLabels(labels)
	return true
}

func setAnnotation(obj *unstructured.Unstructured, key, value string) bool {
	annotations := obj.GetAnnotations()
	if annotations[key] == value {
		return false
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	obj.SetAnnotations(annotations)
	return true
}
