package detector

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWatchable(t *testing.T) {
	all := metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: all},
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: all},
			{Name: "endpoints", Kind: "Endpoints", Namespaced: true, Verbs: all},
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: all},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: metav1.Verbs{"get", "patch", "update"}},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: metav1.Verbs{"create"}},
			{Name: "componentstatuses", Kind: "ComponentStatus", Verbs: metav1.Verbs{"get", "list"}},
			{Name: "namespaces", Kind: "Namespace", Verbs: all},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: all},
			{Name: "deployments/scale", Kind: "Scale", Group: "autoscaling", Version: "v1", Namespaced: true, Verbs: metav1.Verbs{"get", "patch", "update"}},
		}},
		{GroupVersion: "authentication.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "tokenreviews", Kind: "TokenReview", Verbs: metav1.Verbs{"create"}},
		}},
		{GroupVersion: "coordination.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "leases", Kind: "Lease", Namespaced: true, Verbs: all},
		}},
		{GroupVersion: "work.karmada.io/v1alpha2", APIResources: []metav1.APIResource{
			{Name: "resourcebindings", Kind: "ResourceBinding", Namespaced: true, Verbs: all},
		}},
		{GroupVersion: "example.io/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: all},
			{Name: "gadgets", Kind: "Gadget", Verbs: all},
		}},
		nil,
	}
	skipped, err := ParseSkippedAPIs("example.io/v1/gadget;/v1/Pod")
	if err != nil {
		t.Fatal(err)
	}
	want := []resourceType{
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, Kind: "Endpoints", Namespaced: true},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace"},
		{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true},
		{GVR: schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "widgets"}, Kind: "Widget", Namespaced: true},
	}
	if diff := cmp.Diff(want, watchable(lists, skipped)); diff != "" {
		t.Errorf("watchable (-want +got):\n%s", diff)
	}
}
