package execution

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/lua"
)

func TestCovers(t *testing.T) {
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name              string
		desired, observed any
		want              bool
	}{
		{"equal scalars", obj("a", "x", "n", int64(3)), obj("a", "x", "n", int64(3)), true},
		{"observed has more", obj("a", "x"), obj("a", "x", "b", "defaulted"), true},
		{"value differs", obj("replicas", int64(3)), obj("replicas", int64(5)), false},
		{"missing field", obj("a", "x"), obj(), false},
		{"nested differs", obj("spec", obj("image", "nginx:1")), obj("spec", obj("image", "nginx:2")), false},
		{"null matches absent", obj("creationTimestamp", nil), obj(), true},
		{"empty string matches absent", obj("clusterIP", ""), obj(), true},
		{"false matches absent", obj("hostNetwork", false), obj(), true},
		{"zero matches absent", obj("n", int64(0)), obj(), true},
		{"empty map matches absent", obj("resources", obj()), obj(), true},
		{"empty list matches absent", obj("env", []any{}), obj(), true},
		{"true does not match absent", obj("paused", true), obj(), false},
		{"null does not match a value", obj("x", nil), obj("x", "set"), false},
		{"int matches equal float", obj("n", int64(2)), obj("n", float64(2)), true},
		{"int does not match other float", obj("n", int64(2)), obj("n", 2.5), false},
		{"large ints compare exactly", obj("n", int64(1<<62)), obj("n", int64(1<<62+1)), false},
		{"number vs string", obj("n", int64(2)), obj("n", "2"), false},
		{"quantities by value", obj("cpu", "1000m"), obj("cpu", "1"), true},
		{"quantities differ", obj("memory", "1Gi"), obj("memory", "1G"), false},
		{"plain strings differ", obj("image", "nginx"), obj("image", "httpd"), false},
		{"lists element-wise", obj("l", []any{obj("name", "a"), obj("name", "b")}),
			obj("l", []any{obj("name", "a", "x", int64(1)), obj("name", "b")}), true},
		{"list order matters", obj("l", []any{"a", "b"}), obj("l", []any{"b", "a"}), false},
		{"list length matters", obj("l", []any{"a"}), obj("l", []any{"a", "b"}), false},
		{"map vs scalar", obj("spec", obj("a", "b")), obj("spec", "x"), false},
		{"bool differs", obj("paused", true), obj("paused", false), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Covers(tt.desired, tt.observed); got != tt.want {
				t.Errorf("Covers(%v, %v) = %v, want %v", tt.desired, tt.observed, got, tt.want)
			}
		})
	}
}

func staticInterpreter(t testing.TB) interpreter.Interpreter {
	t.Helper()
	vm := lua.New()
	t.Cleanup(vm.Close)
	chain, err := interpreter.NewStatic(vm, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

func TestInSync(t *testing.T) {
	ctx := context.Background()
	interp := staticInterpreter(t)
	target := mustTarget(t, testWork(t, deployment("nginx", 3)))

	tests := []struct {
		name   string
		mutate func(*unstructured.Unstructured)
		// retainReplicas labels the manifest so that the member's replicas
		// are kept.
		retainReplicas bool
		// lastApplied gives the manifest kubectl's last-applied copy, as
		// templates created with kubectl apply have.
		lastApplied bool
		// fromCache reads the member object as the member-object cache
		// holds it.
		fromCache bool
		want      bool
	}{
		{name: "as applied, with defaults and status", want: true},
		{name: "replicas edited in the member", mutate: func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(5), "spec", "replicas")
		}},
		{name: "image edited in the member", mutate: func(o *unstructured.Unstructured) {
			c, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			c[0].(map[string]any)["image"] = "httpd"
			_ = unstructured.SetNestedSlice(o.Object, c, "spec", "template", "spec", "containers")
		}},
		{name: "managed label removed", mutate: func(o *unstructured.Unstructured) {
			l := o.GetLabels()
			delete(l, workv1alpha1.ManagedByKarmadaLabel)
			o.SetLabels(l)
		}},
		{name: "member added a label", want: true, mutate: func(o *unstructured.Unstructured) {
			l := o.GetLabels()
			l["member"] = "own"
			o.SetLabels(l)
		}},
		{name: "applied from another manifest", mutate: func(o *unstructured.Unstructured) {
			a := o.GetAnnotations()
			a[ManifestHashAnnotation] = "older"
			o.SetAnnotations(a)
		}},
		{name: "member scaled with retain-replicas", retainReplicas: true, want: true, mutate: func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(7), "spec", "replicas")
		}},
		{name: "kubectl-applied template read from the cache", lastApplied: true, fromCache: true, want: true},
		{name: "kubectl-applied template, image edited, read from the cache", lastApplied: true, fromCache: true, mutate: func(o *unstructured.Unstructured) {
			c, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			c[0].(map[string]any)["image"] = "httpd"
			_ = unstructured.SetNestedSlice(o.Object, c, "spec", "template", "spec", "containers")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := target
			if tt.retainReplicas || tt.lastApplied {
				m := deployment("nginx", 3)
				meta := m["metadata"].(map[string]any)
				if tt.retainReplicas {
					meta["labels"].(map[string]any)[workv1alpha1.RetainReplicasLabel] = "true"
				}
				if tt.lastApplied {
					meta["annotations"] = map[string]any{lastAppliedAnnotation: `{"kind":"Deployment"}`}
				}
				tg = mustTarget(t, testWork(t, m))
			}
			observed := asObserved(t, tg.Desired)
			if tt.mutate != nil {
				tt.mutate(observed)
			}
			if tt.fromCache {
				packed, err := compactForCache(observed)
				if err != nil {
					t.Fatal(err)
				}
				if observed, err = FromCache(packed); err != nil {
					t.Fatal(err)
				}
			}
			before := tg.Desired.DeepCopy()
			got, err := InSync(ctx, interp, tg, observed)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("InSync = %v, want %v", got, tt.want)
			}
			if !equalObjects(before, tg.Desired) {
				t.Error("InSync changed the desired object")
			}
		})
	}
}

func equalObjects(a, b *unstructured.Unstructured) bool {
	return Covers(a.Object, b.Object) && Covers(b.Object, a.Object)
}
