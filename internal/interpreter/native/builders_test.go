package native

import (
	"context"
	"encoding/json"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// obj builds unstructured objects for tests.
type obj struct{ m map[string]any }

func newObj(apiVersion, kind string) *obj {
	return &obj{m: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "app", "namespace": "shop"},
	}}
}

// set puts v at path, creating maps on the way.
func (o *obj) set(v any, path ...string) *obj {
	m := o.m
	for _, f := range path[:len(path)-1] {
		next, ok := m[f].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[f] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
	return o
}

func (o *obj) u() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: runtime.DeepCopyJSON(o.m)}
}

func deployment() *obj { return newObj("apps/v1", "Deployment") }

func container(name string, requests map[string]any) map[string]any {
	c := map[string]any{"name": name, "image": "registry.example.com/" + name}
	if requests != nil {
		c["resources"] = map[string]any{"requests": requests}
	}
	return c
}

func list(items ...any) []any { return items }

// status makes a status item with a JSON status.
func status(cluster string, s map[string]any) workv1alpha2.AggregatedStatusItem {
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Status: &runtime.RawExtension{Raw: raw}, Applied: true}
}

// quantities compare by value and by how they are written.
var quantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool {
	return a.Cmp(b) == 0 && a.String() == b.String()
})

func ctx() context.Context { return context.Background() }

func kindOf(gvk string) string {
	for i := len(gvk) - 1; i >= 0; i-- {
		if gvk[i] == '/' {
			return gvk[i+1:]
		}
	}
	return gvk
}

func opOf(s string) configv1alpha1.InterpreterOperation {
	return configv1alpha1.InterpreterOperation(s)
}
