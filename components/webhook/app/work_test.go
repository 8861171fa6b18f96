package app

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWorkDefaulting goes through the API server, whose matchConditions
// decide whether /mutate-work is called at all: every Work must come out
// defaulted, whether or not the webhook was needed.
func TestWorkDefaulting(t *testing.T) {
	const (
		ns      = "default"
		idLabel = "work.karmada.io/permanent-id"
		nsAnno  = "work.karmada.io/namespace"
		nameAn  = "work.karmada.io/name"
	)
	manifest := func(labels, annotations map[string]any) map[string]any {
		meta := map[string]any{"name": "cm", "namespace": ns}
		if labels != nil {
			meta["labels"] = labels
		}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
	}
	work := func(name string, labels map[string]any, manifests ...map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
			"metadata": map[string]any{"name": name, "namespace": ns},
		}}
		if labels != nil {
			u.Object["metadata"].(map[string]any)["labels"] = labels
		}
		if manifests != nil {
			list := make([]any, 0, len(manifests))
			for _, m := range manifests {
				list = append(list, m)
			}
			u.Object["spec"] = map[string]any{"workload": map[string]any{"manifests": list}}
		}
		return u
	}
	defaulted := func(name, id string) map[string]any {
		return manifest(map[string]any{idLabel: id}, map[string]any{nsAnno: ns, nameAn: name})
	}

	tests := []struct {
		name string
		in   *unstructured.Unstructured
		// id is the permanent id the Work must keep; empty: any new one.
		id string
	}{
		{name: "bare", in: work("bare", nil, manifest(nil, nil))},
		{name: "no manifests", in: work("no-manifests", nil)},
		{name: "defaulted by its writer", id: "id-1", in: work("written", map[string]any{idLabel: "id-1"}, defaulted("written", "id-1"))},
		{name: "id but a bare manifest", id: "id-2", in: work("half", map[string]any{idLabel: "id-2"}, defaulted("half", "id-2"), manifest(nil, nil))},
		{name: "manifest of another Work", id: "id-3", in: work("moved", map[string]any{idLabel: "id-3"}, defaulted("elsewhere", "id-3"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if err := cp.Create(ctx, tt.in); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cp.Delete(context.Background(), tt.in) })
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(tt.in.GroupVersionKind())
			if err := cp.Get(ctx, client.ObjectKeyFromObject(tt.in), got); err != nil {
				t.Fatal(err)
			}
			id := got.GetLabels()[idLabel]
			if id == "" || (tt.id != "" && id != tt.id) {
				t.Fatalf("permanent id %q, want %q", id, tt.id)
			}
			manifests, _, _ := unstructured.NestedSlice(got.Object, "spec", "workload", "manifests")
			for i, m := range manifests {
				want := defaulted(got.GetName(), id)
				meta := m.(map[string]any)["metadata"].(map[string]any)
				if diff := cmp.Diff(want["metadata"].(map[string]any)["labels"], meta["labels"]); diff != "" {
					t.Errorf("manifest %d labels (-want +got):\n%s", i, diff)
				}
				if diff := cmp.Diff(want["metadata"].(map[string]any)["annotations"], meta["annotations"]); diff != "" {
					t.Errorf("manifest %d annotations (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}
