package lua

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	glua "github.com/yuin/gopher-lua"
)

// call runs one function of code on a fresh VM and converts result 0.
func call(t *testing.T, code, fn string, hints []any, args ...any) any {
	t.Helper()
	vm := New()
	t.Cleanup(vm.Close)
	r, err := vm.Call(context.Background(), Script{Name: t.Name(), Code: code}, fn, 1, args...)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	v, err := r.Value(0, hints...)
	if err != nil {
		t.Fatalf("Value: %v", err)
	}
	return v
}

// deepTouch rebuilds every table through pairs, so nothing of the argument
// stays lazy and everything goes through Lua values.
const deepTouch = `
local function copy(v)
  if type(v) ~= "table" then return v end
  local out = {}
  for k, e in pairs(v) do out[k] = copy(e) end
  return out
end
function Same(x) return x end
function Walk(x)
  -- read every field in place, leaving the tables (and their kinds) as they are
  local function walk(v)
    if type(v) == "table" then for _, e in pairs(v) do walk(e) end end
  end
  walk(x)
  return x
end
function Copy(x) return copy(x) end
`

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any // after a round trip; nil means same as in
		// copied is the result of Copy, which builds new tables: empty ones
		// lose their kind and are left out, as Karmada does.
		copied any
	}{
		{name: "integers", in: map[string]any{"a": int64(0), "b": int64(-7), "c": int64(1 << 52), "d": int64(3)}},
		{name: "floats", in: map[string]any{"a": 1.5, "b": -0.25, "c": 1e-9}},
		{name: "strings and quantities", in: map[string]any{"cpu": "100m", "memory": "1Gi", "empty": ""}},
		{name: "booleans", in: map[string]any{"t": true, "f": false}},
		{name: "nested lists of maps", in: map[string]any{"items": []any{
			map[string]any{"name": "a", "ports": []any{int64(80), int64(443)}},
			map[string]any{"name": "b", "env": []any{map[string]any{"name": "X", "value": "1"}}},
		}}},
		{name: "list of lists", in: []any{[]any{int64(1), int64(2)}, []any{"x"}}},
		{
			name:   "empty map and list",
			in:     map[string]any{"m": map[string]any{}, "l": []any{}, "n": map[string]any{"deeper": map[string]any{}}},
			copied: map[string]any{"n": map[string]any{}},
		},
		{
			name:   "null map values are dropped",
			in:     map[string]any{"a": nil, "b": "x"},
			want:   map[string]any{"b": "x"},
			copied: map[string]any{"b": "x"},
		},
		{name: "null list elements stay", in: map[string]any{"l": []any{int64(1), nil, int64(3)}},
			copied: map[string]any{"l": map[string]any{"1": int64(1), "3": int64(3)}}},
		{
			name: "convenience integer types",
			in:   map[string]any{"int": 3, "int32": int32(4)},
			want: map[string]any{"int": int64(3), "int32": int64(4)},
		},
		{name: "top-level empty map", in: map[string]any{}, copied: nil},
		{name: "top-level empty list", in: []any{}, copied: nil},
		{name: "scalar", in: "hello"},
	}
	for _, tt := range tests {
		want := tt.want
		if want == nil {
			want = tt.in
		}
		copied := tt.copied
		if copied == nil && !strings.HasPrefix(tt.name, "top-level") {
			copied = want
		}
		t.Run(tt.name+"/ToLua-FromLua", func(t *testing.T) {
			L := glua.NewState()
			defer L.Close()
			lv, err := ToLua(L, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := FromLua(lv)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
		for _, fn := range []string{"Same", "Walk"} {
			t.Run(tt.name+"/"+fn, func(t *testing.T) {
				if d := cmp.Diff(want, call(t, deepTouch, fn, nil, tt.in)); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			})
		}
		t.Run(tt.name+"/Copy", func(t *testing.T) {
			if d := cmp.Diff(copied, call(t, deepTouch, "Copy", nil, tt.in)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestWholeFloatsKeepTheirType(t *testing.T) {
	in := map[string]any{"f": 2.0, "l": []any{1.0, 2.5}, "i": int64(2)}
	// Walk touches every table; the argument still says which numbers were floats.
	if d := cmp.Diff(in, call(t, deepTouch, "Walk", nil, in)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// A table the script built has no such memory: a whole number is an integer,
	// unless a hint says otherwise.
	code := `function F() return {f = 2, g = 3} end`
	if d := cmp.Diff(map[string]any{"f": int64(2), "g": int64(3)}, call(t, code, "F", nil)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	hint := map[string]any{"f": 1.5}
	if d := cmp.Diff(map[string]any{"f": 2.0, "g": int64(3)}, call(t, code, "F", []any{hint})); d != "" {
		t.Errorf("with hint (-want +got):\n%s", d)
	}
}

func TestScriptTables(t *testing.T) {
	tests := []struct {
		name  string
		expr  string
		hints []any
		want  any
	}{
		{name: "list", expr: `{1, 2, 3}`, want: []any{int64(1), int64(2), int64(3)}},
		{name: "map", expr: `{a = 1, b = "x"}`, want: map[string]any{"a": int64(1), "b": "x"}},
		{name: "list of maps", expr: `{{name = "a"}, {name = "b"}}`,
			want: []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}},
		{name: "sparse table is a map", expr: `{[1] = "a", [3] = "c"}`, want: map[string]any{"1": "a", "3": "c"}},
		{name: "mixed table is a map", expr: `{"a", x = 1}`, want: map[string]any{"1": "a", "x": int64(1)}},
		{name: "non-integer and boolean keys", expr: `{[1.5] = 1, [true] = 2}`, want: map[string]any{"1.5": int64(1), "true": int64(2)}},
		{name: "float", expr: `{v = 0.5}`, want: map[string]any{"v": 0.5}},
		{name: "large integer", expr: `{v = 2^53}`, want: map[string]any{"v": int64(1 << 53)}},
		{name: "empty table at root is nil", expr: `{}`, want: nil},
		{name: "empty table in map is left out", expr: `{a = {}, b = 1}`, want: map[string]any{"b": int64(1)}},
		{name: "empty table in list is nil", expr: `{{}, 1}`, want: []any{nil, int64(1)}},
		{name: "empty table with list hint", expr: `{a = {}}`, hints: []any{map[string]any{"a": []any{}}},
			want: map[string]any{"a": []any{}}},
		{name: "empty table with map hint", expr: `{a = {}}`, hints: []any{map[string]any{"a": map[string]any{"x": int64(1)}}},
			want: map[string]any{"a": map[string]any{}}},
		{name: "hint for list elements", expr: `{items = {{conditions = {}}, {conditions = {}}}}`,
			hints: []any{map[string]any{"items": []any{map[string]any{"conditions": []any{}}}}},
			want: map[string]any{"items": []any{
				map[string]any{"conditions": []any{}}, map[string]any{"conditions": []any{}}}}},
		{name: "second hint used when first lacks the path", expr: `{a = {}}`,
			hints: []any{map[string]any{}, map[string]any{"a": []any{}}}, want: map[string]any{"a": []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := call(t, "function F() return "+tt.expr+" end", "F", tt.hints)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestFromLuaErrors(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{name: "function", expr: `{spec = {f = function() end}}`, want: "spec.f: a function has no JSON equivalent"},
		{name: "in list", expr: `{items = {1, print}}`, want: "items[1]: a function has no JSON equivalent"},
		{name: "NaN", expr: `{v = 0/0}`, want: "v: NaN has no JSON equivalent"},
		{name: "infinity", expr: `{v = 1/0}`, want: "v: +Inf has no JSON equivalent"},
		{name: "table key", expr: `{[{}] = 1}`, want: "a table cannot be an object key"},
		{name: "cycle", expr: `(function() local t = {} t.self = t return t end)()`, want: "cyclic table"},
	}
	vm := New()
	defer vm.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := vm.Call(context.Background(), Script{Name: "s", Code: "function F() return " + tt.expr + " end"}, "F", 1)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Value(0)
			if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrConversion containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "F: return value #1") {
				t.Errorf("error %q does not name the function and value", err)
			}
		})
	}
}

func TestToLuaValues(t *testing.T) {
	type item struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	L := glua.NewState()
	defer L.Close()
	tests := []struct {
		name string
		in   any
		want any
	}{
		{name: "struct through JSON", in: item{Name: "a", Count: 2}, want: map[string]any{"name": "a", "count": int64(2)}},
		{name: "map[string]string", in: map[string]string{"a": "b"}, want: map[string]any{"a": "b"}},
		{name: "[]string", in: []string{"a", "b"}, want: []any{"a", "b"}},
		{name: "empty []string", in: []string{}, want: []any{}},
		{name: "uint8", in: uint8(7), want: int64(7)},
		{name: "float32", in: float32(0.5), want: 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lv, err := ToLua(L, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := FromLua(lv)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if _, err := ToLua(L, map[string]any{"c": make(chan int)}); !errors.Is(err, ErrConversion) {
		t.Errorf("channel: got %v, want ErrConversion", err)
	}
	if _, err := ToLua(L, map[string]any{"x": math.NaN()}); err != nil {
		t.Errorf("NaN in Lua is allowed, got %v", err)
	}
}

// Pairs order over tables made from Go maps is sorted, so scripts that build
// lists from maps produce the same output every time.
func TestPairsOrderIsDeterministic(t *testing.T) {
	code := `function F(m)
  local keys = {}
  for k in pairs(m) do keys[#keys + 1] = k end
  return keys
end`
	in := map[string]any{"d": int64(1), "a": int64(2), "c": int64(3), "b": int64(4)}
	want := []any{"a", "b", "c", "d"}
	for range 5 {
		if d := cmp.Diff(want, call(t, code, "F", nil, in)); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
	}
}

// DropEmpty follows Karmada's conversion of results it has no reference
// object for: every empty {} or [] below the top goes, whether the script
// built it or it came from the argument, touched or not, shared or not.
func TestDropEmpty(t *testing.T) {
	obj := func() map[string]any {
		return map[string]any{
			"kind": "Widget",
			"spec": map[string]any{
				"selector":  map[string]any{"matchLabels": map[string]any{}},
				"template":  map[string]any{"metadata": map[string]any{}, "spec": map[string]any{"containers": []any{map[string]any{"name": "a", "resources": map[string]any{}}}}},
				"ports":     []any{},
				"nothing":   nil,
				"keepEmpty": map[string]any{"inner": []any{}},
			},
			"status": map[string]any{"conditions": []any{}, "observedGeneration": int64(2), "artifact": map[string]any{}},
		}
	}
	// Karmada's results for obj: the empty values are gone, a table emptied
	// by the deletions stays.
	wantSpec := map[string]any{
		"selector":  map[string]any{},
		"template":  map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "a"}}}},
		"keepEmpty": map[string]any{},
	}
	tests := []struct {
		name string
		code string
		want any
	}{{
		name: "argument returned untouched",
		code: `function F(obj) return obj end`,
		want: map[string]any{"kind": "Widget", "spec": wantSpec, "status": map[string]any{"observedGeneration": int64(2)}},
	}, {
		name: "argument partly read",
		code: `function F(obj)
  if obj.status.observedGeneration ~= nil then obj.status.ready = true end
  return obj
end`,
		want: map[string]any{"kind": "Widget", "spec": wantSpec, "status": map[string]any{"observedGeneration": int64(2), "ready": true}},
	}, {
		name: "tables the script built",
		code: `function F(obj)
  obj.status = {replicas = 0, conditions = {}, details = {{}, {reason = 'x'}}}
  obj.spec = nil
  return obj
end`,
		want: map[string]any{"kind": "Widget", "status": map[string]any{"replicas": int64(0), "details": []any{map[string]any{"reason": "x"}}}},
	}, {
		name: "part of the argument returned",
		code: `function F(obj) return obj.status end`,
		want: map[string]any{"observedGeneration": int64(2)},
	}, {
		name: "empty top value stays",
		code: `function F(obj) return {} end`,
		want: map[string]any{},
	}}
	vm := New()
	t.Cleanup(vm.Close)
	for _, tt := range tests {
		for _, shared := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/shared=%v", tt.name, shared), func(t *testing.T) {
				in := obj()
				r, err := vm.Call(context.Background(), Script{Name: tt.name, Code: tt.code}, "F", 1, in)
				if err != nil {
					t.Fatal(err)
				}
				r = r.DropEmpty()
				if shared {
					r = r.Shared()
				}
				got, err := r.Object(0)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(tt.want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
				if d := cmp.Diff(obj(), in); d != "" {
					t.Errorf("argument modified (-before +after):\n%s", d)
				}
			})
		}
	}
}
