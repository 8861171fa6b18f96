package luarules_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

// dependsOn is a dependencyInterpretation naming the ConfigMap name.
func dependsOn(name string) configv1alpha1.CustomizationRules {
	return configv1alpha1.CustomizationRules{DependencyInterpretation: &configv1alpha1.DependencyInterpretation{LuaScript: fmt.Sprintf(
		"function GetDependencies(obj)\n  return {{apiVersion = 'v1', kind = 'ConfigMap', namespace = obj.metadata.namespace, name = %q}}\nend", name)}}
}

// Karmada runs the dependencyInterpretation of every customization of a
// kind and takes what they all name; the rule is no conflict.
func TestDependenciesOfEveryCustomization(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	kinds, conflicts, errs := luarules.Merge([]*configv1alpha1.ResourceInterpreterCustomization{
		customization("b", "example.com/v1", dependsOn("from-b")),
		customization("a", "example.com/v1", dependsOn("from-a")),
		customization("c", "example.com/v1", configv1alpha1.CustomizationRules{HealthInterpretation: health("function InterpretHealth() return true end")}),
	})
	if len(errs) != 0 || len(conflicts) != 0 {
		t.Fatalf("Merge: errors %v, conflicts %v; want none", errs, conflicts)
	}
	set := luarules.NewSet("test", vm, kinds)
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if !set.HookEnabled(gvk, configv1alpha1.InterpreterOperationInterpretDependency) {
		t.Fatal("no dependency rule for Widget")
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace("shop")
	obj.SetName("w")
	got, handled, err := set.GetDependencies(context.Background(), obj)
	if err != nil || !handled {
		t.Fatalf("GetDependencies: handled %t, error %v", handled, err)
	}
	want := []configv1alpha1.DependentObjectReference{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "from-a"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "from-b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
}
