package lua

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
)

// Arguments are converted on demand; these scripts touch them in every way a
// table can be touched and compare with what a fully converted table gives.
func TestLazyArguments(t *testing.T) {
	obj := func() map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "web", "labels": map[string]any{"b": "2", "a": "1"}},
			"spec": map[string]any{
				"replicas": int64(3),
				"paused":   false,
				"list":     []any{"x", "y"},
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "c1", "image": "i1"},
					map[string]any{"name": "c2", "image": "i2"},
				}}},
				"empty":  map[string]any{},
				"none":   []any{},
				"weight": 0.5,
			},
			"status": map[string]any{"ready": int64(1)},
		}
	}
	tests := []struct {
		name string
		code string
		want any
	}{
		{
			name: "set a converted field",
			code: `function F(o) o.spec.replicas = 5 return o end`,
			want: func() any { o := obj(); o["spec"].(map[string]any)["replicas"] = int64(5); return o }(),
		},
		{
			name: "delete a field never read",
			code: `function F(o) o.status = nil return o end`,
			want: func() any { o := obj(); delete(o, "status"); return o }(),
		},
		{
			name: "delete a field after reading it, then iterate",
			code: `function F(o)
  local s = o.status
  o.status = nil
  for k in pairs(o) do end
  return o
end`,
			want: func() any { o := obj(); delete(o, "status"); return o }(),
		},
		{
			name: "overwrite a field never read, then iterate",
			code: `function F(o) o.metadata = {name = "other"} for k in pairs(o) do end return o end`,
			want: func() any { o := obj(); o["metadata"] = map[string]any{"name": "other"}; return o }(),
		},
		{
			name: "add fields and list elements",
			code: `function F(o)
  o.status.conditions = {{type = "Ready"}}
  table.insert(o.spec.list, "z")
  o.spec.template.spec.containers[3] = {name = "c3"}
  return o
end`,
			want: func() any {
				o := obj()
				o["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Ready"}}
				s := o["spec"].(map[string]any)
				s["list"] = []any{"x", "y", "z"}
				tpl := s["template"].(map[string]any)["spec"].(map[string]any)
				tpl["containers"] = append(tpl["containers"].([]any), map[string]any{"name": "c3"})
				return o
			}(),
		},
		{
			name: "empty tables from the argument keep their kind after being emptied and refilled",
			code: `function F(o) o.spec.empty.x = 1 o.spec.empty.x = nil table.insert(o.spec.none, 1) table.remove(o.spec.none) return o end`,
			want: obj(),
		},
		{
			name: "read everything",
			code: `function F(o)
  local n = 0
  for k, v in pairs(o.metadata.labels) do n = n + 1 end
  for i, c in ipairs(o.spec.template.spec.containers) do n = n + #c.name end
  local k, v = next(o.status)
  local a, b = unpack(o.spec.list)
  return {n = n, k = k, v = v, a = a, b = b, len = #o.spec.list, joined = table.concat(o.spec.list, ","),
          missing = o.spec.nothing == nil, numeric = o.spec[1] == nil}
end`,
			want: map[string]any{"n": int64(6), "k": "ready", "v": int64(1), "a": "x", "b": "y",
				"len": int64(2), "joined": "x,y", "missing": true, "numeric": true},
		},
		{
			name: "return a nested part untouched",
			code: `function F(o) return o.spec.template end`,
			want: obj()["spec"].(map[string]any)["template"],
		},
		{
			name: "tables moved between arguments keep their content",
			code: `function F(o) local t = {} t.labels = o.metadata.labels t.containers = o.spec.template.spec.containers return t end`,
			want: map[string]any{
				"labels":     obj()["metadata"].(map[string]any)["labels"],
				"containers": obj()["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"],
			},
		},
		{
			name: "keys read in any order, then iterated in sorted order",
			code: `function F(o)
  local l = o.metadata.labels
  local _ = l.b
  local keys = {}
  for k in pairs(l) do keys[#keys + 1] = k end
  return keys
end`,
			want: []any{"b", "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := obj()
			before := runtime.DeepCopyJSONValue(in)
			got := call(t, tt.code, "F", nil, in)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if d := cmp.Diff(before, in); d != "" {
				t.Errorf("argument was modified (-before +after):\n%s", d)
			}
		})
	}
}

// Results copy what they take from arguments, unless asked to share.
func TestResultsDoNotAliasArguments(t *testing.T) {
	vm := New()
	defer vm.Close()
	in := map[string]any{"spec": map[string]any{"replicas": int64(1)}, "status": map[string]any{"a": "b"}}
	r, err := vm.Call(context.Background(), Script{Code: `function F(o) o.spec.replicas = 2 return o end`}, "F", 1, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Object(0)
	if err != nil {
		t.Fatal(err)
	}
	out["status"].(map[string]any)["a"] = "changed"
	if in["status"].(map[string]any)["a"] != "b" {
		t.Error("result shares the untouched status map with the argument")
	}
	shared, err := r.Shared().Object(0)
	if err != nil {
		t.Fatal(err)
	}
	shared["status"].(map[string]any)["a"] = "changed"
	if in["status"].(map[string]any)["a"] != "changed" {
		t.Error("Shared results copied the untouched status map")
	}
}
