package manifeststatus

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/lua"
)

func TestSameRaw(t *testing.T) {
	raw := func(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }
	tests := []struct {
		name string
		a, b *runtime.RawExtension
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and null", nil, raw("null"), true},
		{"same bytes", raw(`{"a":1}`), raw(`{"a":1}`), true},
		{"different formatting", raw(`{"a":1,"b":[1,2]}`), raw(`{ "b": [1, 2], "a": 1 }`), true},
		{"different value", raw(`{"a":1}`), raw(`{"a":2}`), false},
		{"nil and value", nil, raw(`{}`), false},
		{"object form", &runtime.RawExtension{Object: &unstructured.Unstructured{Object: map[string]any{"a": int64(1)}}}, raw(`{"a":1}`), true},
	}
	for _, tt := range tests {
		if got := SameRaw(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: sameRaw = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestManifestStatus(t *testing.T) {
	id := workv1alpha1.ResourceIdentifier{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "nginx"}
	old := &workv1alpha1.ManifestStatus{Identifier: id, Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}, Health: workv1alpha1.ResourceUnhealthy}
	fresh := &runtime.RawExtension{Raw: []byte(`{"readyReplicas":3}`)}
	tests := []struct {
		name string
		got  interpreted
		prev *workv1alpha1.ManifestStatus
		want workv1alpha1.ManifestStatus
	}{
		{"first time", interpreted{status: fresh, health: workv1alpha1.ResourceHealthy}, nil,
			workv1alpha1.ManifestStatus{Identifier: id, Status: fresh, Health: workv1alpha1.ResourceHealthy}},
		{"updated", interpreted{status: fresh, health: workv1alpha1.ResourceHealthy}, old,
			workv1alpha1.ManifestStatus{Identifier: id, Status: fresh, Health: workv1alpha1.ResourceHealthy}},
		{"reflect failed: previous status kept", interpreted{reflectErr: errors.New("lua"), health: workv1alpha1.ResourceHealthy}, old,
			workv1alpha1.ManifestStatus{Identifier: id, Status: old.Status, Health: workv1alpha1.ResourceHealthy}},
		{"health failed: previous health kept", interpreted{status: fresh, health: workv1alpha1.ResourceUnknown, healthErr: errors.New("lua")}, old,
			workv1alpha1.ManifestStatus{Identifier: id, Status: fresh, Health: workv1alpha1.ResourceUnhealthy}},
		{"health failed the first time: Unknown", interpreted{status: fresh, health: workv1alpha1.ResourceUnknown, healthErr: errors.New("lua")}, nil,
			workv1alpha1.ManifestStatus{Identifier: id, Status: fresh, Health: workv1alpha1.ResourceUnknown}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, entry(id, tt.got, tt.prev)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestInterpret(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	interp, err := interpreter.NewStatic(vm, nil)
	if err != nil {
		t.Fatal(err)
	}
	deploy := func(ready int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "nginx", "namespace": "default", "generation": int64(1)},
			"spec":     map[string]any{"replicas": int64(3)},
			"status": map[string]any{
				"observedGeneration": int64(1), "replicas": int64(3), "updatedReplicas": int64(3),
				"readyReplicas": ready, "availableReplicas": ready,
			},
		}}
	}
	configMap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "default"},
	}}
	tests := []struct {
		name       string
		obj        *unstructured.Unstructured
		wantHealth workv1alpha1.ResourceHealth
		wantStatus map[string]any
	}{
		{"ready deployment", deploy(3), workv1alpha1.ResourceHealthy, map[string]any{
			"replicas": 3.0, "updatedReplicas": 3.0, "readyReplicas": 3.0, "availableReplicas": 3.0, "observedGeneration": 1.0, "generation": 1.0}},
		{"rolling deployment", deploy(1), workv1alpha1.ResourceUnhealthy, nil},
		{"kind without health rule", configMap, workv1alpha1.ResourceUnknown, nil},
	}
	for _, tt := range tests {
		got := interpret(context.Background(), interp, tt.obj)
		if got.reflectErr != nil || got.healthErr != nil {
			t.Fatalf("%s: errors %v, %v", tt.name, got.reflectErr, got.healthErr)
		}
		if got.health != tt.wantHealth {
			t.Errorf("%s: health %s, want %s", tt.name, got.health, tt.wantHealth)
		}
		if tt.wantStatus != nil {
			want, err := json.Marshal(tt.wantStatus)
			if err != nil {
				t.Fatal(err)
			}
			if !SameRaw(got.status, &runtime.RawExtension{Raw: want}) {
				t.Errorf("%s: status %s, want %s", tt.name, rawBytes(got.status), want)
			}
		}
	}
}
