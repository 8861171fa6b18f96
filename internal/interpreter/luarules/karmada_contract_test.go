package luarules_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

// The scripts below are written the way Karmada's users write them; the
// expected results are what Karmada's interpreter returns for them.

const aggregateWithNilCheck = `
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    return desiredObj
  end
  local status = {readyReplicas = 0, conditions = {}}
  for i = 1, #statusItems do
    if statusItems[i].status ~= nil and statusItems[i].status.readyReplicas ~= nil then
      status.readyReplicas = status.readyReplicas + statusItems[i].status.readyReplicas
    end
  end
  desiredObj.status = status
  return desiredObj
end`

const reflectWithGlobals = `
function ReflectStatus(observedObj)
  local status = {}
  if observedObj.status == nil then
    return status
  end
  error = ''
  phase = observedObj.status.phase
  error = observedObj.status.error
  status.phase = phase
  status.error = error
  status.conditions = observedObj.status.conditions
  status.artifact = observedObj.status.artifact
  status.observedGeneration = observedObj.status.observedGeneration
  return status
end`

func widgetSet(t *testing.T, rules configv1alpha1.CustomizationRules) *luarules.Set {
	t.Helper()
	vm := lua.New()
	t.Cleanup(vm.Close)
	kinds, _, errs := luarules.Merge([]*configv1alpha1.ResourceInterpreterCustomization{customization("widget", "example.com/v1", rules)})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return luarules.NewSet("test", vm, kinds)
}

func widget(spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns"},
		"spec":     spec,
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestAggregateStatusKarmadaContract(t *testing.T) {
	set := widgetSet(t, configv1alpha1.CustomizationRules{
		StatusAggregation: &configv1alpha1.StatusAggregation{LuaScript: aggregateWithNilCheck},
	})
	spec := func() map[string]any {
		return map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{}},
			"ports":    []any{},
			"template": map[string]any{"metadata": map[string]any{}, "spec": map[string]any{"name": "x"}},
		}
	}
	// Karmada's conversion deletes the empty values of the result.
	wantSpec := map[string]any{
		"replicas": int64(2),
		"selector": map[string]any{},
		"template": map[string]any{"spec": map[string]any{"name": "x"}},
	}
	tests := []struct {
		name  string
		items []workv1alpha2.AggregatedStatusItem
		want  map[string]any
	}{{
		// The object comes back as given, less its empty values:
		// status.conditions goes, status stays (it was not empty).
		name: "no status items: statusItems is nil",
		want: widget(wantSpec, map[string]any{}).Object,
	}, {
		name:  "an empty list of items is no items either",
		items: []workv1alpha2.AggregatedStatusItem{},
		want:  widget(wantSpec, map[string]any{}).Object,
	}, {
		name: "items are summed; the empty conditions the script built are dropped",
		items: []workv1alpha2.AggregatedStatusItem{
			{ClusterName: "m1", Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":1}`)}, Applied: true},
			{ClusterName: "m2", Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}, Applied: true},
		},
		want: widget(wantSpec, map[string]any{"readyReplicas": int64(3)}).Object,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := widget(spec(), map[string]any{"conditions": []any{}})
			got, ok, err := set.AggregateStatus(context.Background(), obj, tt.items)
			if err != nil || !ok {
				t.Fatalf("AggregateStatus: %v, %v", ok, err)
			}
			if d := cmp.Diff(tt.want, got.Object); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestReflectStatusKarmadaContract(t *testing.T) {
	set := widgetSet(t, configv1alpha1.CustomizationRules{
		StatusReflection: &configv1alpha1.StatusReflection{LuaScript: reflectWithGlobals},
	})
	tests := []struct {
		name   string
		status map[string]any
		want   map[string]any
	}{{
		name: "error absent: the global holds nil, empty values are dropped",
		status: map[string]any{
			"phase": "Ready", "conditions": []any{}, "artifact": map[string]any{}, "observedGeneration": int64(3),
		},
		want: map[string]any{"phase": "Ready", "observedGeneration": int64(3)},
	}, {
		name:   "error present",
		status: map[string]any{"phase": "Failed", "error": "boom", "conditions": []any{map[string]any{"type": "Ready"}}},
		want:   map[string]any{"phase": "Failed", "error": "boom", "conditions": []any{map[string]any{"type": "Ready"}}},
	}, {
		name: "no status: the empty object",
		want: map[string]any{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, ok, err := set.ReflectStatus(context.Background(), widget(map[string]any{}, tt.status))
			if err != nil || !ok {
				t.Fatalf("ReflectStatus: %v, %v", ok, err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw.Raw, &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, normalizeNumbers(got)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// normalizeNumbers turns the float64 of encoding/json into int64 where
// whole, to compare with the literals above.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}
