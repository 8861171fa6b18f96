// Package conversion serves /convert: the CRD conversion webhook of
// work.karmada.io ResourceBindings and ClusterResourceBindings between
// v1alpha1 and v1alpha2 (the storage version). v1alpha1 keeps the replica
// count and per-replica resources in spec.resource; v1alpha2 has them in
// spec.replicas and spec.replicaRequirements, and much more besides, which
// a v1alpha1 object carries in PreservedAnnotation.
package conversion

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Path is where the conversion webhook is served, as in Karmada.
const Path = "/convert"

// maxReviewBytes bounds a ConversionReview; the API server sends at most a
// page of objects.
const maxReviewBytes = 64 << 20

// Handler serves ConversionReviews of v1.
type Handler struct{}

// NewHandler returns the conversion handler.
func NewHandler() *Handler { return &Handler{} }

func (Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a ConversionReview", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	review := &apiextensionsv1.ConversionReview{}
	if err := json.Unmarshal(body, review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not a ConversionReview: %v", err), http.StatusBadRequest)
		return
	}
	review.Response = Review(review.Request)
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(review); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// Review converts every object of the request, or fails the whole request
// naming the first object that cannot be converted.
func Review(req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionResponse {
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for i, in := range req.Objects {
		out, err := Convert(in.Raw, req.DesiredAPIVersion)
		if err != nil {
			resp.ConvertedObjects = nil
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf("objects[%d]: %v", i, err)}
			return resp
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	return resp
}

// Convert converts one ResourceBinding or ClusterResourceBinding, given as
// JSON, to desired (work.karmada.io/v1alpha1 or v1alpha2).
func Convert(raw []byte, desired string) ([]byte, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, err
	}
	if tm.Kind != "ResourceBinding" && tm.Kind != "ClusterResourceBinding" {
		return nil, fmt.Errorf("cannot convert a %s", tm.Kind)
	}
	if tm.APIVersion == desired {
		return raw, nil
	}
	up := workv1alpha2.GroupVersion.String()
	down := workv1alpha1.GroupVersion.String()
	switch {
	case tm.APIVersion == down && desired == up:
		return upConvert(raw, tm.Kind)
	case tm.APIVersion == up && desired == down:
		return downConvert(raw, tm.Kind)
	}
	return nil, fmt.Errorf("cannot convert %s %s to %s", tm.APIVersion, tm.Kind, desired)
}

func upConvert(raw []byte, kind string) ([]byte, error) {
	var in workv1alpha1.ResourceBinding // same shape as a ClusterResourceBinding
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	meta := in.ObjectMeta
	kept := meta.Annotations[PreservedAnnotation]
	if kept != "" {
		meta.Annotations = without(meta.Annotations, PreservedAnnotation)
	}
	spec, status, err := Up(&in.Spec, &in.Status, kept)
	if err != nil {
		return nil, err
	}
	out := workv1alpha2.ResourceBinding{ObjectMeta: meta, Spec: spec, Status: status}
	out.APIVersion, out.Kind = workv1alpha2.GroupVersion.String(), kind
	return json.Marshal(&out)
}

func downConvert(raw []byte, kind string) ([]byte, error) {
	var in workv1alpha2.ResourceBinding
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	spec, status, kept, err := Down(&in.Spec, &in.Status)
	if err != nil {
		return nil, err
	}
	meta := in.ObjectMeta
	annotations := make(map[string]string, len(meta.Annotations)+1)
	for k, v := range meta.Annotations {
		annotations[k] = v
	}
	annotations[PreservedAnnotation] = kept
	meta.Annotations = annotations
	out := workv1alpha1.ResourceBinding{ObjectMeta: meta, Spec: spec, Status: status}
	out.APIVersion, out.Kind = workv1alpha1.GroupVersion.String(), kind
	return json.Marshal(&out)
}

func without(m map[string]string, key string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
