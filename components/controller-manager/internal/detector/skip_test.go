package detector

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseSkippedAPIs(t *testing.T) {
	skipped, err := ParseSkippedAPIs(" networking.k8s.io ; apps/v1beta1;/v1/pod,Secret; batch/v1/CronJob ;")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"}, true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, false},
		{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, true},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}, true},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, false},
	}
	for _, tt := range tests {
		if got := skipped.Skips(tt.gvk); got != tt.want {
			t.Errorf("Skips(%s) = %v, want %v", tt.gvk, got, tt.want)
		}
	}
}

func TestParseSkippedAPIsErrors(t *testing.T) {
	for _, s := range []string{"a/b/c/d", "apps/", "apps//Deployment", "apps/v1/Deployment,,Job"} {
		if _, err := ParseSkippedAPIs(s); err == nil {
			t.Errorf("ParseSkippedAPIs(%q) succeeded, want an error", s)
		}
	}
}

func TestNilSkippedAPIsSkipNothing(t *testing.T) {
	var s *SkippedAPIs
	if s.Skips(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}) {
		t.Error("a nil skip list skips")
	}
	empty, err := ParseSkippedAPIs("")
	if err != nil || empty.Skips(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}) {
		t.Errorf("an empty skip list skips or fails: %v", err)
	}
}

func TestBuiltinSkipped(t *testing.T) {
	tests := []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{schema.GroupVersionKind{Group: "policy.karmada.io", Version: "v1alpha1", Kind: "PropagationPolicy"}, true},
		{schema.GroupVersionKind{Group: "work.karmada.io", Version: "v1alpha2", Kind: "ResourceBinding"}, true},
		{schema.GroupVersionKind{Group: "cluster.karmada.io", Version: "v1alpha1", Kind: "Cluster"}, true},
		{schema.GroupVersionKind{Group: "config.karmada.io", Version: "v1alpha1", Kind: "ResourceInterpreterCustomization"}, true},
		{schema.GroupVersionKind{Group: "networking.karmada.io", Version: "v1alpha1", Kind: "MultiClusterService"}, true},
		{schema.GroupVersionKind{Group: "autoscaling.karmada.io", Version: "v1alpha1", Kind: "FederatedHPA"}, true},
		{schema.GroupVersionKind{Group: "remedy.karmada.io", Version: "v1alpha1", Kind: "Remedy"}, true},
		{schema.GroupVersionKind{Group: "apps.karmada.io", Version: "v1alpha1", Kind: "WorkloadRebalancer"}, true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Event"}, true},
		{schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, true},
		{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, true},
		// Users' groups that merely end in .karmada.io, and the MCS API.
		{schema.GroupVersionKind{Group: "example-abc.karmada.io", Version: "v1", Kind: "Thing"}, false},
		{schema.GroupVersionKind{Group: "karmada.io", Version: "v1", Kind: "Thing"}, false},
		{schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceExport"}, false},
		{schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceImport"}, false},
		{schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, false},
		{schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}, false},
		{schema.GroupVersionKind{Group: "notkarmada.io", Version: "v1", Kind: "Thing"}, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, false},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false},
	}
	for _, tt := range tests {
		if got := builtinSkipped(tt.gvk); got != tt.want {
			t.Errorf("builtinSkipped(%s) = %v, want %v", tt.gvk, got, tt.want)
		}
	}
}
