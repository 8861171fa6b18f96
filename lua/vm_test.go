package lua

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, code string
		line       int
		msg        string
	}{
		{name: "unfinished function", code: "function GetReplicas(obj)\n  return obj.spec.replicas\n", msg: "at end of script"},
		{name: "bad token", code: "function F()\n  local x = = 1\nend", line: 2, msg: "near '='"},
		{name: "compile error", code: "function F()\n  goto nowhere\nend", line: 3, msg: "no visible label 'nowhere'"},
	}
	vm := New()
	defer vm.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := Script{Name: "custom/replicaResource", Code: tt.code}
			for _, err := range []error{
				Compile(script),
				func() error { _, err := vm.Call(context.Background(), script, "F", 1); return err }(),
				vm.Check(context.Background(), script, "F"),
			} {
				var e *Error
				if !errors.As(err, &e) || !errors.Is(err, ErrSyntax) {
					t.Fatalf("got %v, want *Error wrapping ErrSyntax", err)
				}
				if e.Line != tt.line || !strings.Contains(e.Message, tt.msg) || e.Script != script.Name {
					t.Errorf("got line %d %q in %q, want line %d containing %q", e.Line, e.Message, e.Script, tt.line, tt.msg)
				}
			}
		})
	}
}

func TestRuntimeErrors(t *testing.T) {
	vm := New()
	defer vm.Close()
	tests := []struct {
		name, code, fn string
		line           int
		msg            string
	}{
		{name: "index nil", code: "function F(obj)\n  return obj.spec.replicas\nend", fn: "F", line: 2, msg: "attempt to index a non-table object(nil) with key 'replicas'"},
		{name: "error()", code: "function F()\n\n  error('boom')\nend", fn: "F", line: 3, msg: "boom"},
		{name: "error in chunk", code: "local x = nil\nx.y = 1\nfunction F() end", fn: "F", line: 2, msg: "attempt to index"},
		{name: "stack overflow", code: "local function f(n) return 1 + f(n + 1) end\nfunction F() return f(1) end", fn: "F", msg: "stack overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := vm.Call(context.Background(), Script{Name: "s", Code: tt.code}, tt.fn, 1, map[string]any{})
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrRuntime) {
				t.Fatalf("got %v, want ErrRuntime", err)
			}
			if (tt.line != 0 && e.Line != tt.line) || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("got line %d %q, want line %d containing %q", e.Line, e.Message, tt.line, tt.msg)
			}
		})
	}
	// A failing call leaves the state usable.
	if got := callOn(t, vm, `function F() return 1 end`); got != int64(1) {
		t.Errorf("after errors: got %v", got)
	}
	if n := vm.pool.dropped.Load(); n != 0 {
		t.Errorf("%d states dropped after Lua errors, want 0", n)
	}
}

// callOn runs F of code on vm and converts its first result.
func callOn(t *testing.T, vm *VM, code string, args ...any) any {
	t.Helper()
	r, err := vm.Call(context.Background(), Script{Name: t.Name(), Code: code}, "F", 1, args...)
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Value(0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCheck(t *testing.T) {
	vm := New()
	defer vm.Close()
	ctx := context.Background()
	ok := Script{Name: "ok", Code: "function GetReplicas(obj) return 1 end\nfunction ReviseReplica(obj, n) return obj end"}
	if err := vm.Check(ctx, ok, "GetReplicas", "ReviseReplica"); err != nil {
		t.Errorf("valid script: %v", err)
	}
	err := vm.Check(ctx, ok, "GetReplicas", "Retain")
	if !errors.Is(err, ErrNotDefined) || !strings.Contains(err.Error(), "global function Retain is not defined") {
		t.Errorf("missing function: got %v", err)
	}
	notFn := Script{Name: "notfn", Code: "Retain = 5"}
	if err := vm.Check(ctx, notFn, "Retain"); !errors.Is(err, ErrNotDefined) || !strings.Contains(err.Error(), "is a number") {
		t.Errorf("global of another type: got %v", err)
	}
	if _, err := vm.Call(ctx, ok, "Retain", 1); !errors.Is(err, ErrNotDefined) {
		t.Errorf("Call of a missing function: got %v", err)
	}
	chunkErr := Script{Name: "chunk", Code: "function F() end\nerror('at load')"}
	if err := vm.Check(ctx, chunkErr, "F"); !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), "line 2: at load") {
		t.Errorf("chunk error: got %v", err)
	}
	loop := Script{Name: "loop", Code: "while true do end"}
	if err := New(WithTimeout(50*time.Millisecond)).Check(ctx, loop, "F"); !errors.Is(err, ErrTimeout) {
		t.Errorf("looping chunk: got %v", err)
	}
}

func TestTimeout(t *testing.T) {
	vm := New(WithTimeout(100*time.Millisecond), WithPoolSize(1))
	defer vm.Close()
	ctx := context.Background()
	for _, code := range []string{
		"function F()\n  while true do end\nend",
		"function F()\n  local n = 0\n  while true do n = n + 1 end\nend",
		// pcall cannot swallow the timeout for good.
		"function F()\n  while true do pcall(function() while true do end end) end\nend",
		// nor can a Go function looping over Lua callbacks.
		"function F()\n  local t = {} for i = 1, 1000 do t[i] = i end\n  table.sort(t, function(a, b) while true do end end)\nend",
		"function F()\n  return (('x'):rep(100000)):gsub('x', function() while true do end end)\nend",
	} {
		start := time.Now()
		_, err := vm.Call(ctx, Script{Name: "loop", Code: code}, "F", 1)
		elapsed := time.Since(start)
		if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: got %v, want ErrTimeout", code, err)
		}
		if elapsed > time.Second {
			t.Errorf("%s: stopped after %v", code, elapsed)
		}
		var e *Error
		if errors.As(err, &e); e.Function != "F" || e.Line == 0 {
			t.Errorf("%s: got function %q line %d, want F and a line", code, e.Function, e.Line)
		}
		// The pool works afterwards.
		if got := callOn(t, vm, `function F(x) return x + 1 end`, int64(1)); got != int64(2) {
			t.Fatalf("after timeout: got %v", got)
		}
	}
	if n := vm.pool.dropped.Load(); n != 5 {
		t.Errorf("dropped %d states, want the 5 interrupted ones", n)
	}
}

func TestContextEndsCall(t *testing.T) {
	vm := New()
	defer vm.Close()
	loop := Script{Name: "loop", Code: "function F() while true do end end"}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := vm.Call(ctx, loop, "F", 0)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 500*time.Millisecond {
		t.Errorf("caller deadline: got %v after %v", err, time.Since(start))
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := vm.Call(ctx, loop, "F", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: got %v", err)
	}
	if _, err := vm.Call(ctx, loop, "F", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("already canceled: got %v", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	vm := New(WithMemoryLimit(32<<20), WithTimeout(5*time.Second))
	defer vm.Close()
	ctx := context.Background()
	bombs := []string{
		`local t = {} while true do t[#t + 1] = string.rep("x", 1e6) end`,
		`local t = {} local i = 0 while true do i = i + 1 t[i] = {i, tostring(i)} end`,
		`local s = "x" while true do s = s .. s end`,
		`local t = {} while true do t[#t + 1] = table.concat({string.rep("y", 1e5), "z"}) end`,
	}
	for _, code := range bombs {
		start := time.Now()
		_, err := vm.Call(ctx, Script{Name: "bomb", Code: "function F() " + code + " end"}, "F", 0)
		if !errors.Is(err, ErrMemoryLimit) {
			t.Errorf("%s: got %v, want ErrMemoryLimit", code, err)
		}
		t.Logf("%s: %v after %v", code, err, time.Since(start))
		if got := callOn(t, vm, `function F() return "fine" end`); got != "fine" {
			t.Fatalf("after memory bomb: got %v", got)
		}
	}
}

func TestResults(t *testing.T) {
	vm := New()
	defer vm.Close()
	code := `function F() return 3, "x", true, nil, {a = 1}, {1, 2}, 2.5, {} end`
	r, err := vm.Call(context.Background(), Script{Name: "r", Code: code}, "F", MultRet)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 8 {
		t.Fatalf("Len = %d, want 8", r.Len())
	}
	if n, err := r.Int64(0); n != 3 || err != nil {
		t.Errorf("Int64(0) = %v, %v", n, err)
	}
	if b, err := r.Bool(2); !b || err != nil {
		t.Errorf("Bool(2) = %v, %v", b, err)
	}
	if !r.IsNil(3) || !r.IsNil(42) || r.Type(1) != "string" {
		t.Errorf("IsNil/Type wrong")
	}
	if m, err := r.Object(4); err != nil || m["a"] != int64(1) {
		t.Errorf("Object(4) = %v, %v", m, err)
	}
	if l, err := r.List(5); err != nil || len(l) != 2 {
		t.Errorf("List(5) = %v, %v", l, err)
	}
	if f, err := r.Number(6); f != 2.5 || err != nil {
		t.Errorf("Number(6) = %v, %v", f, err)
	}
	if m, err := r.Object(7); err != nil || m == nil || len(m) != 0 {
		t.Errorf("Object of an empty table = %#v, %v, want an empty map", m, err)
	}
	if l, err := r.List(7); err != nil || l == nil || len(l) != 0 {
		t.Errorf("List of an empty table = %#v, %v, want an empty list", l, err)
	}

	// Wrong types are reported with the function and position; the caller decides.
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"Int64 of string", func() error { _, err := r.Int64(1); return err }(), "F: return value #2: expected a number, got string"},
		{"Int64 of fraction", func() error { _, err := r.Int64(6); return err }(), "return value #7: expected a whole number, got 2.5"},
		{"Bool of number", func() error { _, err := r.Bool(0); return err }(), "return value #1: expected a boolean, got number"},
		{"Object of nil", func() error { _, err := r.Object(3); return err }(), "return value #4: expected a table, got nil"},
		{"Object of list", func() error { _, err := r.Object(5); return err }(), "return value #6: expected an object, got a list"},
		{"List of map", func() error { _, err := r.List(4); return err }(), "return value #5: expected a list, got an object"},
	} {
		if !errors.Is(tt.err, ErrConversion) || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, tt.err, tt.want)
		}
	}

	r, err = vm.Call(context.Background(), Script{Name: "r", Code: `function F() return 1 end`}, "F", 3)
	if err != nil || r.Len() != 3 || !r.IsNil(2) {
		t.Errorf("nret pads with nil: %v %v", r, err)
	}
}

func TestArgumentConversionError(t *testing.T) {
	vm := New()
	defer vm.Close()
	_, err := vm.Call(context.Background(), Script{Code: `function F(x) return x end`}, "F", 1, map[string]any{}, make(chan int))
	if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "argument #2") {
		t.Errorf("got %v", err)
	}
	if got := callOn(t, vm, `function F() return 1 end`); got != int64(1) {
		t.Errorf("after conversion error: %v", got)
	}
}

func TestPoolReusesStates(t *testing.T) {
	vm := New(WithPoolSize(2))
	defer vm.Close()
	for i := range 20 {
		code := fmt.Sprintf("function F() return %d end", i%3)
		if got := callOn(t, vm, code); got != int64(i%3) {
			t.Fatalf("got %v", got)
		}
	}
	if n := vm.pool.created.Load(); n != 1 {
		t.Errorf("sequential calls created %d states, want 1", n)
	}
	if n := len(vm.programs.m); n != 3 {
		t.Errorf("%d compiled scripts cached, want 3", n)
	}
}

func TestScriptCacheIsBounded(t *testing.T) {
	vm := New(WithScriptCacheSize(4))
	defer vm.Close()
	for i := range 10 {
		callOn(t, vm, fmt.Sprintf("function F() return %d end", i))
	}
	if n := len(vm.programs.m); n > 4 {
		t.Errorf("cache holds %d scripts, want at most 4", n)
	}
}

// Run with -race: many goroutines share one VM, each checking its results.
func TestConcurrentCalls(t *testing.T) {
	vm := New(WithPoolSize(3))
	defer vm.Close()
	scripts := []Script{
		{Name: "replicas", Code: `function GetReplicas(obj) return obj.spec.replicas, {resourceRequest = {cpu = "100m"}} end`},
		{Name: "revise", Code: `function ReviseReplica(obj, n) obj.spec.replicas = n return obj end`},
		{Name: "health", Code: `function InterpretHealth(obj) return obj.status.ready == obj.spec.replicas end`},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				n := int64(g*1000 + i)
				obj := map[string]any{"spec": map[string]any{"replicas": n}, "status": map[string]any{"ready": n}}
				if err := checkConcurrent(vm, scripts[i%3], obj, n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func checkConcurrent(vm *VM, s Script, obj map[string]any, n int64) error {
	ctx := context.Background()
	switch s.Name {
	case "replicas":
		r, err := vm.Call(ctx, s, "GetReplicas", 2, obj)
		if err != nil {
			return err
		}
		got, err := r.Int64(0)
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("GetReplicas = %v, want %d", got, n)
		}
	case "revise":
		r, err := vm.Call(ctx, s, "ReviseReplica", 1, obj, n+1)
		if err != nil {
			return err
		}
		got, err := r.Object(0)
		if err != nil {
			return err
		}
		want := map[string]any{"spec": map[string]any{"replicas": n + 1}, "status": map[string]any{"ready": n}}
		if d := cmp.Diff(want, got); d != "" {
			return fmt.Errorf("ReviseReplica (-want +got):\n%s", d)
		}
	case "health":
		r, err := vm.Call(ctx, s, "InterpretHealth", 1, obj)
		if err != nil {
			return err
		}
		ok, err := r.Bool(0)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("InterpretHealth = false, want true")
		}
	}
	return nil
}
