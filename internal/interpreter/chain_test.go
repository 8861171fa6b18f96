package interpreter_test

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/bundled"
	"github.com/flotilla-io/flotilla/internal/interpreter/customization"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/internal/interpreter/webhook"
	"github.com/flotilla-io/flotilla/lua"
)

var deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

// TestChainOrder removes layers one by one: a customization beats a
// webhook, which beats a bundled customization, which beats the native
// rule.
func TestChainOrder(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	srv := interpreterWebhook(t, func(*configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
		n := int32(12)
		return &configv1alpha1.ResourceInterpreterResponse{Successful: true, Replicas: &n}
	})
	rics := customization.NewStore(vm)
	hooks := webhook.NewStore(webhook.Options{})
	third, err := bundled.New(bundledFS(), vm)
	if err != nil {
		t.Fatal(err)
	}
	chain := interpreter.NewChain(rics, hooks, third, native.New())

	rics.Apply(ctx(), ric("user", configv1alpha1.CustomizationRules{ReplicaResource: replicasScript("11")}))
	hooks.Apply(ctx(), webhookConfig("hooks", srv, 5, rule(
		[]configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationInterpretReplica},
		[]string{"apps"}, []string{"v1"}, []string{"Deployment"})))

	steps := []struct {
		name   string
		before func()
		want   int32
	}{
		{"customization", func() {}, 11},
		{"webhook", func() { rics.Delete(ctx(), "user") }, 12},
		{"bundled", func() { hooks.Delete(ctx(), "hooks") }, 13},
	}
	for _, s := range steps {
		s.before()
		got, _, err := chain.GetReplicas(ctx(), deployment(3))
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s answered %d, want %d", s.name, got, s.want)
		}
	}
	nativeOnly := interpreter.NewChain(rics, hooks, native.New())
	got, requires, err := nativeOnly.GetReplicas(ctx(), deployment(3))
	if err != nil || got != 3 || requires == nil || requires.ResourceRequest.Cpu().String() != "100m" {
		t.Errorf("native: %d, %+v, %v; want 3 with a 100m CPU request", got, requires, err)
	}
	if !chain.HookEnabled(deploymentGVK, configv1alpha1.InterpreterOperationInterpretHealth) {
		t.Error("health of Deployments not enabled (native rule)")
	}
	if chain.HookEnabled(deploymentGVK, configv1alpha1.InterpreterOperationInterpretComponent) {
		t.Error("components of Deployments enabled, but no layer has a rule")
	}
	if _, err := chain.GetComponents(ctx(), deployment(1)); !errors.Is(err, interpreter.ErrNotSupported) {
		t.Errorf("GetComponents of a Deployment: %v, want ErrNotSupported", err)
	}
}

// TestMergeCustomizations: each rule comes from whichever customization
// defines it; the first by name wins a rule defined twice.
func TestMergeCustomizations(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	rics := customization.NewStore(vm)
	chain := interpreter.NewChain(rics, native.New())
	rics.Apply(ctx(), ric("b-health-and-replicas", configv1alpha1.CustomizationRules{
		ReplicaResource:      replicasScript("22"),
		HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(obj) return false end"},
	}))
	rics.Apply(ctx(), ric("a-replicas", configv1alpha1.CustomizationRules{ReplicaResource: replicasScript("21")}))

	replicas, _, err := chain.GetReplicas(ctx(), deployment(1))
	if err != nil || replicas != 21 {
		t.Errorf("replicas %d, %v; want 21 from a-replicas", replicas, err)
	}
	healthy, err := chain.InterpretHealth(ctx(), deployment(1))
	if err != nil || healthy {
		t.Errorf("healthy %v, %v; want false from b-health-and-replicas", healthy, err)
	}
	if origin := rics.Snapshot().Kind(deploymentGVK).Origin(configv1alpha1.InterpreterOperationInterpretHealth); origin != "b-health-and-replicas" {
		t.Errorf("health rule from %q", origin)
	}
	rics.Delete(ctx(), "a-replicas")
	if replicas, _, _ := chain.GetReplicas(ctx(), deployment(1)); replicas != 22 {
		t.Errorf("after deleting a-replicas: replicas %d, want 22", replicas)
	}
	rics.Delete(ctx(), "b-health-and-replicas")
	if replicas, _, _ := chain.GetReplicas(ctx(), deployment(1)); replicas != 1 {
		t.Errorf("after deleting both: replicas %d, want the native 1", replicas)
	}
}

// fakeLayer answers everything with fixed results.
type fakeLayer struct {
	replicas int32
	revised  *unstructured.Unstructured
	deps     []configv1alpha1.DependentObjectReference
	comps    []workv1alpha2.Component
	synced   bool
}

func (f *fakeLayer) Name() string { return "fake" }
func (f *fakeLayer) HookEnabled(schema.GroupVersionKind, configv1alpha1.InterpreterOperation) bool {
	return true
}
func (f *fakeLayer) HasSynced() bool { return f.synced }
func (f *fakeLayer) GetReplicas(context.Context, *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, bool, error) {
	return f.replicas, nil, true, nil
}
func (f *fakeLayer) GetComponents(context.Context, *unstructured.Unstructured) ([]workv1alpha2.Component, bool, error) {
	return f.comps, true, nil
}
func (f *fakeLayer) ReviseReplica(context.Context, *unstructured.Unstructured, int64) (*unstructured.Unstructured, bool, error) {
	return f.revised, true, nil
}
func (f *fakeLayer) Retain(context.Context, *unstructured.Unstructured, *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	return f.revised, true, nil
}
func (f *fakeLayer) AggregateStatus(context.Context, *unstructured.Unstructured, []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, bool, error) {
	return f.revised, true, nil
}
func (f *fakeLayer) ReflectStatus(context.Context, *unstructured.Unstructured) (*runtime.RawExtension, bool, error) {
	return nil, true, nil
}
func (f *fakeLayer) InterpretHealth(context.Context, *unstructured.Unstructured) (bool, bool, error) {
	return true, true, nil
}
func (f *fakeLayer) GetDependencies(context.Context, *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, bool, error) {
	return f.deps, true, nil
}

// TestChainChecksAnswers: whatever layer answers, unusable answers become
// errors.
func TestChainChecksAnswers(t *testing.T) {
	other := deployment(1)
	other.SetName("someone-else")
	tests := []struct {
		name string
		f    *fakeLayer
		call func(c *interpreter.Chain) error
	}{
		{"negative replicas", &fakeLayer{replicas: -1, synced: true}, func(c *interpreter.Chain) error {
			_, _, err := c.GetReplicas(ctx(), deployment(1))
			return err
		}},
		{"revised object is another object", &fakeLayer{revised: other, synced: true}, func(c *interpreter.Chain) error {
			_, err := c.ReviseReplica(ctx(), deployment(1), 2)
			return err
		}},
		{"retained nothing", &fakeLayer{synced: true}, func(c *interpreter.Chain) error {
			_, err := c.Retain(ctx(), deployment(1), deployment(1))
			return err
		}},
		{"aggregated into another kind", &fakeLayer{revised: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}, synced: true},
			func(c *interpreter.Chain) error {
				_, err := c.AggregateStatus(ctx(), deployment(1), nil)
				return err
			}},
		{"dependency without kind", &fakeLayer{deps: []configv1alpha1.DependentObjectReference{{APIVersion: "v1", Name: "x"}}, synced: true},
			func(c *interpreter.Chain) error {
				_, err := c.GetDependencies(ctx(), deployment(1))
				return err
			}},
		{"components with one name twice", &fakeLayer{comps: []workv1alpha2.Component{{Name: "a"}, {Name: "a"}}, synced: true},
			func(c *interpreter.Chain) error {
				_, err := c.GetComponents(ctx(), deployment(1))
				return err
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(interpreter.NewChain(tt.f))
			if !errors.Is(err, interpreter.ErrInvalidResult) {
				t.Errorf("err = %v, want ErrInvalidResult", err)
			}
		})
	}

	f := &fakeLayer{synced: true, deps: []configv1alpha1.DependentObjectReference{
		{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "b"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "b"},
	}}
	deps, err := interpreter.NewChain(f).GetDependencies(ctx(), deployment(1))
	if err != nil {
		t.Fatal(err)
	}
	want := []configv1alpha1.DependentObjectReference{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "b"},
	}
	if diff := cmp.Diff(want, deps); diff != "" {
		t.Errorf("dependencies not sorted and deduplicated (-want +got):\n%s", diff)
	}
}

// TestChainNotReady: until every watched layer has synced, calls fail
// rather than answer from rules the user may have overridden.
func TestChainNotReady(t *testing.T) {
	f := &fakeLayer{replicas: 1}
	chain := interpreter.NewChain(f)
	if _, _, err := chain.GetReplicas(ctx(), deployment(1)); !errors.Is(err, interpreter.ErrNotReady) {
		t.Errorf("before sync: %v, want ErrNotReady", err)
	}
	f.synced = true
	if _, _, err := chain.GetReplicas(ctx(), deployment(1)); err != nil {
		t.Errorf("after sync: %v", err)
	}
}

// TestStaticChain uses the embedded bundled customizations.
func TestStaticChain(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	chain, err := interpreter.NewStatic(vm, fstest.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, err := chain.GetReplicas(ctx(), deployment(4)); err != nil || n != 4 {
		t.Errorf("GetReplicas = %d, %v", n, err)
	}
	if _, err := interpreter.NewStatic(vm, nil); err != nil {
		t.Errorf("embedded customizations: %v", err)
	}
}
