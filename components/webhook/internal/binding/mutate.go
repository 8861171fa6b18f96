// Package binding defaults ResourceBindings and ClusterResourceBindings
// (/mutate-resourcebinding, /mutate-clusterresourcebinding) and enforces
// FederatedResourceQuotas on scheduled ResourceBindings
// (/validate-resourcebinding).
package binding

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/webhook/internal/verdict"
)

// +kubebuilder:webhook:path=/mutate-resourcebinding,mutating=true,failurePolicy=fail,sideEffects=None,groups=work.karmada.io,resources=resourcebindings,verbs=create;update,versions=v1alpha2,name=resourcebinding.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3,patch=`{"matchConditions":[{"name":"no-permanent-id","expression":"!has(object.metadata.labels) || !('resourcebinding.karmada.io/permanent-id' in object.metadata.labels)"}]}`
// +kubebuilder:webhook:path=/mutate-clusterresourcebinding,mutating=true,failurePolicy=fail,sideEffects=None,groups=work.karmada.io,resources=clusterresourcebindings,verbs=create;update,versions=v1alpha2,name=clusterresourcebinding.karmada.io,admissionReviewVersions=v1,serviceName=karmada-webhook,serviceNamespace=karmada-system,servicePort=443,timeoutSeconds=3,patch=`{"matchConditions":[{"name":"no-permanent-id","expression":"!has(object.metadata.labels) || !('clusterresourcebinding.karmada.io/permanent-id' in object.metadata.labels)"}]}`

// The defaulting webhooks are only called for a binding without its
// permanent id (matchConditions): the detector writes bindings with it, and
// a webhook call costs the API server more than the rest of the write.
//
// The binding webhooks register v1alpha2 only: with the default matchPolicy
// (Equivalent) the API server converts requests made in v1alpha1 before
// sending them, so the handlers decode one version.

// Defaulter gives a binding its permanent id when it has none.
type Defaulter struct {
	decoder admission.Decoder
	idLabel string
	newObj  func() client.Object
}

// NewResourceBindingDefaulter serves /mutate-resourcebinding.
func NewResourceBindingDefaulter(decoder admission.Decoder) *Defaulter {
	return &Defaulter{decoder: decoder, idLabel: workv1alpha2.ResourceBindingPermanentIDLabel,
		newObj: func() client.Object { return &workv1alpha2.ResourceBinding{} }}
}

// NewClusterResourceBindingDefaulter serves /mutate-clusterresourcebinding.
func NewClusterResourceBindingDefaulter(decoder admission.Decoder) *Defaulter {
	return &Defaulter{decoder: decoder, idLabel: workv1alpha2.ClusterResourceBindingPermanentIDLabel,
		newObj: func() client.Object { return &workv1alpha2.ClusterResourceBinding{} }}
}

// Handle answers with the patch adding the permanent-id label: the id the
// binding had before an update that dropped it, or a new one. The detector
// sets it too, so bindings work the same without the webhook.
func (h *Defaulter) Handle(_ context.Context, req admission.Request) admission.Response {
	obj := h.newObj()
	if err := h.decoder.Decode(req, obj); err != nil {
		return verdict.BadRequest(err)
	}
	labels := obj.GetLabels()
	if labels[h.idLabel] != "" {
		return admission.Allowed("")
	}
	id := ""
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := h.newObj()
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return verdict.BadRequest(err)
		}
		id = old.GetLabels()[h.idLabel]
	}
	if id == "" {
		id = string(uuid.NewUUID())
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[h.idLabel] = id
	obj.SetLabels(labels)
	return verdict.Patch(req, obj)
}
