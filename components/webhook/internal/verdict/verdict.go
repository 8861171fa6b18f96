// Package verdict builds the answers of the admission handlers: refusals
// that name every offending field the way the API server's own validation
// does, and patches from the request's object to the defaulted one.
package verdict

import (
	"encoding/json"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Invalid refuses an object with a 422 Invalid status whose causes carry
// the field path of each error, so that clients see the same shape as a
// failed schema validation (apierrors.IsInvalid, status.details.causes).
// An empty list allows the request.
func Invalid(kind schema.GroupKind, name string, errs field.ErrorList) admission.Response {
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := apierrors.NewInvalid(kind, name, errs).ErrStatus
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// Forbidden refuses a request that is well formed but not allowed, such as
// the deletion of a protected object.
func Forbidden(resource schema.GroupResource, name, reason string) admission.Response {
	status := apierrors.NewForbidden(resource, name, forbiddenReason(reason)).ErrStatus
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

type forbiddenReason string

func (r forbiddenReason) Error() string { return string(r) }

// Patch allows the request with the JSON patch that turns its object into
// obj; nothing to patch allows it as it is.
func Patch(req admission.Request, obj any) admission.Response {
	changed, err := json.Marshal(obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, changed)
}

// PatchFields is Patch limited to the named top-level fields of obj (such
// as "spec" or "metadata"): the rest of the request's object is kept as
// sent. It suits kinds whose Go types write fields the request did not
// have, such as a status struct without omitempty, which Patch would turn
// into operations of their own.
func PatchFields(req admission.Request, obj any, fields ...string) admission.Response {
	var original, changed map[string]json.RawMessage
	if err := json.Unmarshal(req.Object.Raw, &original); err != nil {
		return BadRequest(err)
	}
	data, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(data, &changed)
	}
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	for _, f := range fields {
		if v, ok := changed[f]; ok {
			original[f] = v
		}
	}
	merged, err := json.Marshal(original)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, merged)
}

// BadRequest answers a request whose object cannot be decoded.
func BadRequest(err error) admission.Response {
	return admission.Errored(http.StatusBadRequest, err)
}
