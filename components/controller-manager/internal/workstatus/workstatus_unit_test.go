package workstatus

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/lua"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configmaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func TestUsage(t *testing.T) {
	a := types.NamespacedName{Namespace: "karmada-es-m1", Name: "a"}
	b := types.NamespacedName{Namespace: "karmada-es-m1", Name: "b"}
	m1Deploy := memberResource{cluster: "m1", gvr: deployments}
	m1CM := memberResource{cluster: "m1", gvr: configmaps}
	m2Deploy := memberResource{cluster: "m2", gvr: deployments}

	u := newUsage()
	steps := []struct {
		name       string
		do         func() []memberResource
		wantUnused []memberResource
		needed     []memberResource
		notNeeded  []memberResource
	}{
		{"a uses deployments twice and configmaps", func() []memberResource {
			return u.set(a, []memberResource{m1Deploy, m1CM, m1Deploy})
		}, nil, []memberResource{m1Deploy, m1CM}, []memberResource{m2Deploy}},
		{"b uses deployments", func() []memberResource { return u.set(b, []memberResource{m1Deploy}) }, nil, []memberResource{m1Deploy}, nil},
		{"a drops configmaps", func() []memberResource { return u.set(a, []memberResource{m1Deploy}) },
			[]memberResource{m1CM}, []memberResource{m1Deploy}, []memberResource{m1CM}},
		{"a again, unchanged", func() []memberResource { return u.set(a, []memberResource{m1Deploy}) }, nil, []memberResource{m1Deploy}, nil},
		{"a goes: b still uses deployments", func() []memberResource { return u.forget(a) }, nil, []memberResource{m1Deploy}, nil},
		{"a forgotten twice", func() []memberResource { return u.forget(a) }, nil, []memberResource{m1Deploy}, nil},
		{"b needs nothing any more", func() []memberResource { return u.set(b, nil) }, []memberResource{m1Deploy}, nil, []memberResource{m1Deploy}},
		{"b goes after that", func() []memberResource { return u.forget(b) }, nil, nil, nil},
	}
	for _, s := range steps {
		got := s.do()
		if diff := cmp.Diff(s.wantUnused, got, cmp.AllowUnexported(memberResource{})); diff != "" {
			t.Errorf("%s: unused (-want +got):\n%s", s.name, diff)
		}
		for _, r := range s.needed {
			if !u.needed(r) {
				t.Errorf("%s: %v not needed", s.name, r)
			}
		}
		for _, r := range s.notNeeded {
			if u.needed(r) {
				t.Errorf("%s: %v still needed", s.name, r)
			}
		}
	}
	if len(u.works) != 0 || len(u.users) != 0 {
		t.Errorf("leftovers: %v %v", u.works, u.users)
	}
}

func TestDispatched(t *testing.T) {
	applied := func(status metav1.ConditionStatus, gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: status, ObservedGeneration: gen}}
	}
	now := metav1.Now()
	tests := []struct {
		name string
		work workv1alpha1.Work
		want bool
	}{
		{"applied", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionTrue, 2)}}, true},
		{"not applied yet", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, false},
		{"apply failed", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionFalse, 2)}}, false},
		{"older spec applied", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionTrue, 2)}}, false},
		{"suspended", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true)},
			Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionTrue, 2)}}, false},
		{"deleting", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2, DeletionTimestamp: &now},
			Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionTrue, 2)}}, false},
	}
	for _, tt := range tests {
		if got := dispatched(&tt.work); got != tt.want {
			t.Errorf("%s: dispatched = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDrifted(t *testing.T) {
	tests := []struct {
		s    memberState
		want bool
	}{
		{memberState{}, true}, // deleted behind our back
		{memberState{found: true, managed: true, inSync: true}, false},   // as applied
		{memberState{found: true, managed: true, inSync: false}, true},   // edited behind our back
		{memberState{found: true, managed: false, inSync: false}, false}, // another Work's: a conflict
	}
	for _, tt := range tests {
		if got := drifted(tt.s); got != tt.want {
			t.Errorf("drifted(%+v) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

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
		if got := sameRaw(tt.a, tt.b); got != tt.want {
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
		if diff := cmp.Diff(tt.want, manifestStatus(id, tt.got, tt.prev)); diff != "" {
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
			if !sameRaw(got.status, &runtime.RawExtension{Raw: want}) {
				t.Errorf("%s: status %s, want %s", tt.name, rawBytes(got.status), want)
			}
		}
	}
}
