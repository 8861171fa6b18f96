package interpreter_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/customization"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/lua"
)

// userChain is a chain of one user customization over the native rules,
// with a short Lua time limit.
func userChain(t *testing.T, c *configv1alpha1.ResourceInterpreterCustomization) *interpreter.Chain {
	t.Helper()
	vm := lua.New(lua.WithTimeout(200 * time.Millisecond))
	t.Cleanup(vm.Close)
	rics := customization.NewStore(vm)
	rics.Apply(ctx(), c)
	return interpreter.NewChain(rics, native.New())
}

func TestInfiniteLoopIsStopped(t *testing.T) {
	chain := userChain(t, ric("spinner", configv1alpha1.CustomizationRules{
		ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `
function GetReplicas(obj)
  local n = 0
  while true do n = n + 1 end
end`},
		HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: `function InterpretHealth(obj) return obj.status ~= nil end`},
	}))
	start := time.Now()
	_, _, err := chain.GetReplicas(ctx(), deployment(1))
	elapsed := time.Since(start)
	if !errors.Is(err, lua.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if elapsed > 2*time.Second {
		t.Errorf("stopped after %s, limit 200ms", elapsed)
	}
	for _, want := range []string{"spinner/replicaResource", "GetReplicas", "InterpretReplica", "customization"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The pool still works, for this customization and others.
	for range 20 {
		if _, err := chain.InterpretHealth(ctx(), deployment(1)); err != nil {
			t.Fatalf("after the timeout: %v", err)
		}
	}
}

func TestDisabledFunction(t *testing.T) {
	chain := userChain(t, ric("sneaky", configv1alpha1.CustomizationRules{
		ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `
function GetReplicas(obj)
  return rawget(obj.spec, "replicas"), nil
end`},
	}))
	_, _, err := chain.GetReplicas(ctx(), deployment(1))
	if err == nil || !strings.Contains(err.Error(), "rawget") || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("err = %v, want an error naming the disabled rawget", err)
	}
	if !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error %q does not give the line", err)
	}
}

func TestSyntaxError(t *testing.T) {
	chain := userChain(t, ric("broken", configv1alpha1.CustomizationRules{
		ReplicaRevision: &configv1alpha1.ReplicaRevision{LuaScript: `
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica +
end`},
	}))
	_, err := chain.ReviseReplica(ctx(), deployment(1), 2)
	if !errors.Is(err, lua.ErrSyntax) {
		t.Fatalf("err = %v, want ErrSyntax", err)
	}
	for _, want := range []string{"broken/replicaRevision", "line 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestWrongResults: a script returning the wrong type or shape fails the
// call and leaves the object given to it as it was.
func TestWrongResults(t *testing.T) {
	tests := []struct {
		name  string
		rules configv1alpha1.CustomizationRules
		call  func(*interpreter.Chain, *runtimeObject) error
		want  error
	}{{
		name:  "replicas as a string",
		rules: configv1alpha1.CustomizationRules{ReplicaResource: replicasScript(`"three"`)},
		call: func(c *interpreter.Chain, o *runtimeObject) error {
			_, _, err := c.GetReplicas(ctx(), o.u)
			return err
		},
		want: lua.ErrConversion,
	}, {
		name: "requirements of the wrong shape",
		rules: configv1alpha1.CustomizationRules{ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{
			LuaScript: `function GetReplicas(obj) return 1, {resourceRequest = "lots"} end`}},
		call: func(c *interpreter.Chain, o *runtimeObject) error {
			_, _, err := c.GetReplicas(ctx(), o.u)
			return err
		},
		want: lua.ErrConversion,
	}, {
		name: "revised object is a number",
		rules: configv1alpha1.CustomizationRules{ReplicaRevision: &configv1alpha1.ReplicaRevision{
			LuaScript: `function ReviseReplica(obj, n) obj.spec.replicas = n; return n end`}},
		call: func(c *interpreter.Chain, o *runtimeObject) error {
			_, err := c.ReviseReplica(ctx(), o.u, 7)
			return err
		},
		want: lua.ErrConversion,
	}, {
		name: "revised object changes kind",
		rules: configv1alpha1.CustomizationRules{ReplicaRevision: &configv1alpha1.ReplicaRevision{
			LuaScript: `function ReviseReplica(obj, n) obj.spec.replicas = n; obj.kind = "StatefulSet"; return obj end`}},
		call: func(c *interpreter.Chain, o *runtimeObject) error {
			_, err := c.ReviseReplica(ctx(), o.u, 7)
			return err
		},
		want: lua.ErrConversion,
	}, {
		name: "health as a string",
		rules: configv1alpha1.CustomizationRules{HealthInterpretation: &configv1alpha1.HealthInterpretation{
			LuaScript: `function InterpretHealth(obj) return "yes" end`}},
		call: func(c *interpreter.Chain, o *runtimeObject) error {
			_, err := c.InterpretHealth(ctx(), o.u)
			return err
		},
		want: lua.ErrConversion,
	}, {
		name: "dependencies with a numeric name",
		rules: configv1alpha1.CustomizationRules{DependencyInterpretation: &configv1alpha1.DependencyInterpretation{
			LuaScript: `function GetDependencies(obj) return {{apiVersion = "v1", kind = "Secret", name = 5}} end`}},
		call: func(c *interpreter.Chain, o *runtimeObject) error {
			_, err := c.GetDependencies(ctx(), o.u)
			return err
		},
		want: lua.ErrConversion,
	}, {
		name: "aggregated status as a list",
		rules: configv1alpha1.CustomizationRules{StatusAggregation: &configv1alpha1.StatusAggregation{
			LuaScript: `function AggregateStatus(obj, items) obj.status = {replicas = 1}; return {obj} end`}},
		call: func(c *interpreter.Chain, o *runtimeObject) error {
			_, err := c.AggregateStatus(ctx(), o.u, nil)
			return err
		},
		want: lua.ErrConversion,
	}, {
		name: "function missing",
		rules: configv1alpha1.CustomizationRules{StatusReflection: &configv1alpha1.StatusReflection{
			LuaScript: `function ReflectSomething(obj) return obj.status end`}},
		call: func(c *interpreter.Chain, o *runtimeObject) error {
			_, err := c.ReflectStatus(ctx(), o.u)
			return err
		},
		want: lua.ErrNotDefined,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain := userChain(t, ric("wrong", tt.rules))
			o := &runtimeObject{u: deployment(3)}
			before := runtime.DeepCopyJSON(o.u.Object)
			err := tt.call(chain, o)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), "wrong/") {
				t.Errorf("error %q does not name the customization and rule", err)
			}
			if diff := cmp.Diff(before, o.u.Object); diff != "" {
				t.Errorf("the object changed (-before +after):\n%s", diff)
			}
		})
	}
}
