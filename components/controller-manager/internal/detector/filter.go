package detector

import (
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/names"
)

// templateFilter says which objects the detector leaves alone whatever the
// policies say.
type templateFilter struct {
	skippedNamespaces []*regexp.Regexp
}

func (f templateFilter) skippedNamespace(ns string) bool {
	if names.IsReserved(ns) {
		return true
	}
	for _, re := range f.skippedNamespaces {
		if re.MatchString(ns) {
			return true
		}
	}
	return false
}

// ignored reports whether obj is never propagated: it lives in a reserved
// or skipped namespace (or is such a Namespace), belongs to the control
// plane itself, is claimed by another controller (a MultiClusterService
// claims its Service), or is a service account token, which every cluster
// makes for its own service accounts.
func (f templateFilter) ignored(obj *unstructured.Unstructured) bool {
	if ns := obj.GetNamespace(); ns != "" && f.skippedNamespace(ns) {
		return true
	}
	apiVersion, kind := obj.GetAPIVersion(), obj.GetKind()
	if apiVersion == "v1" {
		switch kind {
		case "Namespace":
			if f.skippedNamespace(obj.GetName()) {
				return true
			}
		case "Secret":
			if t, _, _ := unstructured.NestedString(obj.Object, "type"); t == string(corev1.SecretTypeServiceAccountToken) {
				return true
			}
		}
	}
	if metadataString(obj, "labels", workv1alpha1.KarmadaSystemLabel) == workv1alpha1.KarmadaSystemLabelValue {
		return true
	}
	switch metadataString(obj, "labels", policyv1alpha1.ResourceTemplateClaimedByLabel) {
	case "", "PropagationPolicy", "ClusterPropagationPolicy":
	default:
		return true
	}
	return false
}

// metadataString reads metadata.<field>[key] without copying the map, as
// GetLabels and GetAnnotations do; empty when absent.
func metadataString(obj *unstructured.Unstructured, field, key string) string {
	m, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", field)
	mm, _ := m.(map[string]any)
	s, _ := mm[key].(string)
	return s
}
