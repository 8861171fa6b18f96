package lua

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	glua "github.com/yuin/gopher-lua"
)

func TestDisabledFunctions(t *testing.T) {
	vm := New()
	defer vm.Close()
	for _, name := range disabledFunctions {
		t.Run(name, func(t *testing.T) {
			code := "function F()\n  return " + name + "({}, 'x')\nend"
			_, err := vm.Call(context.Background(), Script{Name: "s", Code: code}, "F", 1)
			if !errors.Is(err, ErrRuntime) {
				t.Fatalf("got %v, want ErrRuntime", err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Line != 2 || e.Function != "F" {
				t.Errorf("got %#v, want line 2 of F", e)
			}
			if want := "function '" + name + "' is disabled"; !strings.Contains(err.Error(), want) {
				t.Errorf("got %q, want it to contain %q", err, want)
			}
		})
	}
	t.Run("string.dump", func(t *testing.T) {
		_, err := vm.Call(context.Background(), Script{Code: `function F() return string.dump(F) end`}, "F", 1)
		if err == nil || !strings.Contains(err.Error(), "function 'string.dump' is disabled") {
			t.Errorf("got %v", err)
		}
	})
}

func TestSandboxGlobals(t *testing.T) {
	code := `function F()
  return {
    io = io == nil, package = package == nil, debug = debug == nil, coroutine = coroutine == nil,
    execute = os.execute == nil, exit = os.exit == nil, getenv = os.getenv == nil, remove = os.remove == nil,
    time = type(os.time()) == "number", date = type(os.date("%Y")) == "string", clock = type(os.clock()) == "number",
    difftime = os.difftime(5, 3) == 2,
    string = type(string.format) == "function", table = type(table.insert) == "function",
    math = math.floor(2.5) == 2, pcall = type(pcall) == "function", G = _G.F == F,
  }
end`
	got := call(t, code, "F", nil)
	for k, v := range got.(map[string]any) {
		if v != true {
			t.Errorf("%s: got %v", k, v)
		}
	}
}

func TestRequire(t *testing.T) {
	got := call(t, `local kube = require("kube")
function F() return kube.resourceAdd("1", "1") end`, "F", nil)
	if got != "2" {
		t.Errorf("kube.resourceAdd: got %v", got)
	}
	vm := New()
	defer vm.Close()
	for _, mod := range []string{"os", "io", "string", "./evil"} {
		_, err := vm.Call(context.Background(), Script{Code: `function F() return require("` + mod + `") end`}, "F", 1)
		if err == nil || !strings.Contains(err.Error(), "module '"+mod+"' not found") {
			t.Errorf("require(%q): got %v", mod, err)
		}
	}
}

func TestLibrariesAreReadOnly(t *testing.T) {
	vm := New(WithPoolSize(1))
	defer vm.Close()
	for _, code := range []string{
		`string.format = nil`,
		`string.evil = function() end`,
		`table.insert(string, "x")`,
		`table.insert(kube, "x")`,
		`math.pi = 3`,
		`os.time = nil`,
		`require("kube").resourceAdd = nil`,
		`("").__index.format = nil`,
		`string.__index.rep = nil`,
	} {
		script := Script{Code: "kube = require('kube')\nfunction F() " + code + " end"}
		_, err := vm.Call(context.Background(), script, "F", 0)
		if err == nil || !strings.Contains(err.Error(), "read-only table") {
			t.Errorf("%s: got %v, want a read-only error", code, err)
		}
	}
	// And nothing changed for the next script.
	got := callOn(t, vm, `function F() return {string.format("%d", 1), #string.rep("ab", 2), math.pi > 3.14, ("a"):upper()} end`)
	if d := cmp.Diff([]any{"1", int64(4), true, "A"}, got); d != "" {
		t.Error(d)
	}
}

// Globals a script defines, in its chunk or while running, never reach the
// next call, of the same script or another.
func TestGlobalsDoNotLeak(t *testing.T) {
	vm := New(WithPoolSize(1))
	defer vm.Close()
	ctx := context.Background()
	counter := Script{Name: "counter", Code: `
loaded = (loaded or 0) + 1
function F()
  calls = (calls or 0) + 1
  _G.viaG = true
  return {loaded = loaded, calls = calls}
end`}
	for range 3 {
		r, err := vm.Call(ctx, counter, "F", 1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Value(0)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(map[string]any{"loaded": int64(1), "calls": int64(1)}, got); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
	}
	other := Script{Name: "other", Code: `function F() return {loaded == nil, calls == nil, viaG == nil, F ~= nil} end`}
	r, err := vm.Call(ctx, other, "F", 1)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := r.Value(0)
	if d := cmp.Diff([]any{true, true, true, true}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if n := vm.pool.created.Load(); n != 1 {
		t.Errorf("created %d states, want 1 reused state", n)
	}
}

// A global set to nil is nil, as in Lua and Karmada, even when it is named
// like a built-in: the environment must not fall back to the shared
// function of that name. Each case returns what the script's global holds
// at the end; a leaked built-in would fail to convert.
func TestGlobalAssignedNilStaysNil(t *testing.T) {
	vm := New(WithPoolSize(1))
	defer vm.Close()
	tests := []struct {
		name string
		code string
		want any
	}{{
		name: "global error reassigned from an absent field",
		code: `
function ReflectStatus(observedObj)
  error = ''
  if observedObj.status ~= nil then
    error = observedObj.status.error
  end
  return {phase = observedObj.status.phase, error = error}
end`,
		want: map[string]any{"phase": "Running"},
	}, {
		name: "assigned in the chunk, cleared in the function",
		code: `
type = 'Ready'
function ReflectStatus(observedObj)
  type = observedObj.status.type
  return {isNil = type == nil}
end`,
		want: map[string]any{"isNil": true},
	}, {
		name: "cleared through _G",
		code: `
function ReflectStatus(observedObj)
  _G['select'] = 1
  _G['select'] = nil
  return {isNil = select == nil}
end`,
		want: map[string]any{"isNil": true},
	}, {
		name: "built-ins stay usable beside the shadowed one",
		code: `
function ReflectStatus(observedObj)
  error = nil
  return {n = tonumber('3'), s = string.upper('a'), isNil = error == nil}
end`,
		want: map[string]any{"n": int64(3), "s": "A", "isNil": true},
	}}
	obj := map[string]any{"status": map[string]any{"phase": "Running"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := vm.Call(context.Background(), Script{Name: tt.name, Code: tt.code}, "ReflectStatus", 1, obj)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Value(0)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	// The shadowing is per call: the next script sees the built-in again.
	r, err := vm.Call(context.Background(), Script{Code: `function F() return type(error) end`}, "F", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Value(0); got != "function" {
		t.Errorf("error is a %v after the scripts above, want the function", got)
	}
}

func TestPrintGoesToTheLogger(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	ctx := logr.NewContext(context.Background(), log)
	vm := New()
	defer vm.Close()
	if _, err := vm.Call(ctx, Script{Name: "p", Code: `function F() print("hello", 42, nil) end`}, "F", 0); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"message"="hello\t42\tnil"`) || !strings.Contains(lines[0], `"script"="p"`) {
		t.Errorf("got %q", lines)
	}
}

func TestStringLimits(t *testing.T) {
	// The cases scan megabytes before they reach the limit: on a busy
	// machine that can take longer than the default 1s, and the test is of
	// the limit, not of the timeout.
	vm := New(WithTimeout(time.Minute))
	defer vm.Close()
	// Ordinary uses stay well within the limits.
	got := callOn(t, vm, `function F()
  return {string.format("release 20240101 of %s: %5.2f%%", "web", 99.5), ("ab"):rep(3), table.concat({1, "b"}, "-"), (("a.b"):gsub("%.", "/"))}
end`)
	if d := cmp.Diff([]any{"release 20240101 of web: 99.50%", "ababab", "1-b", "a/b"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, tt := range []struct{ name, code string }{
		{"string.rep", `return string.rep("x", 1e10)`},
		{"string.rep", `return ("ab"):rep(1e8)`},
		{"string.format", `return string.format("%s%s%s%s%s", big, big, big, big, big)`},
		{"string.format", `return string.format("%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d%999999d", 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)`},
		{"table.concat", `local t = {} for i = 1, 5 do t[i] = big end return table.concat(t)`},
		{"string.gsub", `return big:gsub("x", ("y"):rep(100))`},
		{"string.gsub", `return ("x"):rep(1000):gsub("x", {x = big})`},
		{"string.gsub", `return ("x"):rep(1000):gsub("x", function() return big end)`},
	} {
		script := Script{Code: "big = string.rep('x', 4 * 1024 * 1024)\nfunction F() " + tt.code + " end"}
		_, err := vm.Call(context.Background(), script, "F", 1)
		if err == nil || !strings.Contains(err.Error(), tt.name+": result of") {
			t.Errorf("%s: got %v, want the string limit", tt.code, err)
		}
	}
}

// gsub and gmatch are reimplemented; they must give what gopher-lua gives.
func TestPatternFunctionsMatchGopherLua(t *testing.T) {
	exprs := []string{
		`("hello world"):gsub("o", "0")`,
		`("hello world"):gsub("o", "0", 1)`,
		`("hello world"):gsub("o", "0", 0)`,
		`("hello world"):gsub("(%w+)", "<%1>")`,
		`("hello world"):gsub("%w+", "%0 %0")`,
		`("hello world"):gsub("(%w+) (%w+)", "%2 %1")`,
		`("abc"):gsub("", "-")`,
		`("abc"):gsub("x*", "-")`,
		`("abc"):gsub("^a", "A")`,
		`("aaa"):gsub("^a", "A")`,
		`("abc"):gsub("b", "%%")`,
		`("abc"):gsub("b", "%x")`,
		`("abc"):gsub("b", "100%")`,
		`("$name is $age"):gsub("%$(%w+)", {name = "Bob", age = 42})`,
		`("$name is $unknown"):gsub("%$(%w+)", {name = "Bob"})`,
		`("a,b,,c"):gsub("[^,]*", function(s) return "[" .. s .. "]" end)`,
		`("key=value"):gsub("(%w+)=(%w+)", function(k, v) return v .. "=" .. k end)`,
		`("abc"):gsub("()b()", "%1-%2")`,
		`("abc"):gsub("b", function() return false end)`,
		`("10m,20m"):gsub("(%d+)m", function(n) return tonumber(n) * 2 end)`,
		`("no match"):gsub("xyz", "q")`,
		`string.gsub(12345, "3", "x")`,
	}
	for _, e := range exprs {
		want := runPlain(t, "return "+e)
		got := call(t, "function F() return {"+e+"} end", "F", nil)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-gopher-lua +ours):\n%s", e, d)
		}
	}
	gmatches := []string{
		`for w in ("one two  three"):gmatch("%a+") do out[#out + 1] = w end`,
		`for k, v in ("a=1, b=2"):gmatch("(%w+)=(%w+)") do out[#out + 1] = k .. v end`,
		`for p in ("abc"):gmatch("()") do out[#out + 1] = p end`,
		`for w in ("aXbXc"):gmatch("[^X]*") do out[#out + 1] = "<" .. w .. ">" end`,
	}
	for _, g := range gmatches {
		code := "local out = {} " + g + " return out"
		want := runPlain(t, code).([]any)[0]
		got := call(t, "function F() "+code+" end", "F", nil)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-gopher-lua +ours):\n%s", g, d)
		}
	}
	vm := New()
	defer vm.Close()
	if _, err := vm.Call(context.Background(), Script{Code: `function F() return ("x"):gsub("(", "") end`}, "F", 1); err == nil {
		t.Error("malformed pattern: no error")
	}
	if _, err := vm.Call(context.Background(), Script{Code: `function F() return ("x"):gsub("x", "%2") end`}, "F", 1); err == nil ||
		!strings.Contains(err.Error(), "invalid capture index") {
		t.Errorf("bad capture index: got %v", err)
	}
}

// runPlain evaluates code in an unsandboxed gopher-lua state, returning its
// results as a list.
func runPlain(t *testing.T, code string) any {
	t.Helper()
	L := glua.NewState()
	defer L.Close()
	if err := L.DoString("function __F() return {(function() " + code + " end)()} end"); err != nil {
		t.Fatal(err)
	}
	if err := L.CallByParam(glua.P{Fn: L.GetGlobal("__F"), NRet: 1, Protect: true}); err != nil {
		t.Fatal(err)
	}
	v, err := FromLua(L.Get(-1))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// globalWrites finds the globals a script assigns, in nested functions too,
// and whether it names _G; locals are not globals.
func TestGlobalWrites(t *testing.T) {
	tests := []struct {
		code     string
		assigned []string
		namesG   bool
	}{
		{code: `local error = 1; function F() return error end`, assigned: []string{"F"}},
		{code: `function F() local function g() type = 'x' end; status = {} end`, assigned: []string{"F", "status", "type"}},
		{code: `x = 1; x = 2`, assigned: []string{"x"}},
		{code: `function F() return _G end`, assigned: []string{"F"}, namesG: true},
		{code: `local t = {}; t.error = 1`},
	}
	for _, tt := range tests {
		proto, err := compile(Script{Code: tt.code})
		if err != nil {
			t.Fatal(err)
		}
		assigned, namesG := globalWrites(proto)
		if d := cmp.Diff(tt.assigned, assigned); d != "" || namesG != tt.namesG {
			t.Errorf("%s: assigned (-want +got):\n%s\nnamesG = %v, want %v", tt.code, d, namesG, tt.namesG)
		}
	}
}
