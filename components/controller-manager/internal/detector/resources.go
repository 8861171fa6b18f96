package detector

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resourceType is a type of resource template the detector watches.
type resourceType struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

func (r resourceType) GVK() schema.GroupVersionKind {
	return r.GVR.GroupVersion().WithKind(r.Kind)
}

// requiredVerbs: the detector lists and watches templates and patches its
// claim onto them.
var requiredVerbs = []string{"list", "watch", "patch"}

// watchable picks, from discovery's preferred resources, the types whose
// templates the detector watches: no subresources, only types it can list,
// watch and patch, nothing skipped.
func watchable(lists []*metav1.APIResourceList, skipped *SkippedAPIs) []resourceType {
	var out []resourceType
	for _, list := range lists {
		if list == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, requiredVerbs) {
				continue
			}
			gvk := gv.WithKind(r.Kind)
			if builtinSkipped(gvk) || skipped.Skips(gvk) {
				continue
			}
			out = append(out, resourceType{GVR: gv.WithResource(r.Name), Kind: r.Kind, Namespaced: r.Namespaced})
		}
	}
	return out
}

func hasVerbs(have metav1.Verbs, want []string) bool {
	for _, v := range want {
		if !slices.Contains(have, v) {
			return false
		}
	}
	return true
}
