package luarules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

func customization(name, apiVersion string, rules configv1alpha1.CustomizationRules) *configv1alpha1.ResourceInterpreterCustomization {
	return &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: apiVersion, Kind: "Widget"}, Customizations: rules,
		},
	}
}

func health(code string) *configv1alpha1.HealthInterpretation {
	return &configv1alpha1.HealthInterpretation{LuaScript: code}
}

func TestMerge(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	kinds, conflicts, errs := luarules.Merge([]*configv1alpha1.ResourceInterpreterCustomization{
		customization("c", "example.com/v1", configv1alpha1.CustomizationRules{HealthInterpretation: health("function InterpretHealth() return 3 end")}),
		customization("b", "example.com/v1", configv1alpha1.CustomizationRules{
			HealthInterpretation: health("function InterpretHealth() return 2 end"),
			ReplicaRevision:      &configv1alpha1.ReplicaRevision{LuaScript: "function ReviseReplica(o) return o end"},
		}),
		customization("a", "example.com/v1", configv1alpha1.CustomizationRules{HealthInterpretation: health("function InterpretHealth() return 1 end")}),
		customization("bad", "not a version/x/y", configv1alpha1.CustomizationRules{}),
	})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "bad") {
		t.Errorf("errors %v, want one about customization bad", errs)
	}
	k := kinds[gvk]
	if k == nil {
		t.Fatal("no rules for Widget")
	}
	if got := k.Origin(configv1alpha1.InterpreterOperationInterpretHealth); got != "a" {
		t.Errorf("health from %q, want a", got)
	}
	if got := k.Origin(configv1alpha1.InterpreterOperationReviseReplica); got != "b" {
		t.Errorf("revision from %q, want b", got)
	}
	if _, ok := k.Script(configv1alpha1.InterpreterOperationRetain); ok {
		t.Error("retention defined")
	}
	want := []luarules.Conflict{{GVK: gvk, Rule: "healthInterpretation", Used: "a", Ignored: []string{"b", "c"}}}
	if diff := cmp.Diff(want, conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
}

func TestCheck(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	c := customization("mixed", "example.com/v1", configv1alpha1.CustomizationRules{
		HealthInterpretation: health("function InterpretHealth(obj)\n  return true\nend"),
		ReplicaResource:      &configv1alpha1.ReplicaResourceRequirement{LuaScript: "function GetReplicas(obj)\n  return 1,\nend"},
		StatusReflection:     &configv1alpha1.StatusReflection{LuaScript: "function Reflect(obj) return obj.status end"},
	})
	errs := luarules.Check(context.Background(), vm, c)
	if len(errs) != 2 {
		t.Fatalf("errors %v, want 2", errs)
	}
	for i, want := range []string{"mixed/replicaResource", "mixed/statusReflection"} {
		if !strings.Contains(errs[i].Error(), want) {
			t.Errorf("error %q does not name %s", errs[i], want)
		}
	}
	if !strings.Contains(errs[0].Error(), "line 3") {
		t.Errorf("syntax error %q has no line", errs[0])
	}
	if errs := luarules.Compile(c); len(errs) != 1 {
		t.Errorf("Compile: %v, want the syntax error only", errs)
	}
}

func TestDecodeCustomizations(t *testing.T) {
	cs, err := luarules.DecodeCustomizations([]byte(`
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: one}
spec: {target: {apiVersion: v1, kind: Pod}, customizations: {}}
---
---
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: two}
spec: {target: {apiVersion: v1, kind: Pod}, customizations: {}}
`))
	if err != nil || len(cs) != 2 || cs[1].Name != "two" {
		t.Errorf("decoded %v, %v", cs, err)
	}
	if _, err := luarules.DecodeCustomizations([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")); err == nil {
		t.Error("a ConfigMap was taken for a customization")
	}
}
