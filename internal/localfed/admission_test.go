package localfed_test

import (
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWebhookIsInThePath: the control plane calls Flotilla's webhook for
// defaulting, validation and the bindings' conversion. (This file sorts
// before localfed_test.go, whose TestClose closes the shared federation.)
func TestWebhookIsInThePath(t *testing.T) {
	f := fed.Get(t)
	ctx := t.Context()
	c := f.ControlPlane.Client

	policy := func(name string, preemption string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "policy.karmada.io/v1alpha1",
			"kind":       "PropagationPolicy",
			"metadata":   map[string]any{"name": name, "namespace": "default"},
			"spec": map[string]any{
				"preemption":        preemption,
				"resourceSelectors": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}},
				"placement":         map[string]any{"clusterAffinity": map[string]any{"clusterNames": []any{"member1"}}},
			},
		}}
	}
	err := c.Create(ctx, policy("greedy", "Always"))
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil ||
		len(status.Status().Details.Causes) != 1 || status.Status().Details.Causes[0].Field != "spec.resourceSelectors[0].name" {
		t.Fatalf("creating an invalid policy: %v, want Invalid on spec.resourceSelectors[0].name", err)
	}

	p := policy("defaulted", "Never")
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, p) })
	if p.GetLabels()["propagationpolicy.karmada.io/permanent-id"] == "" {
		t.Error("the policy got no permanent id")
	}
	tolerations, _, _ := unstructured.NestedSlice(p.Object, "spec", "placement", "clusterTolerations")
	keys := make([]string, 0, len(tolerations))
	for _, tol := range tolerations {
		keys = append(keys, tol.(map[string]any)["key"].(string))
	}
	if !slices.Equal(keys, []string{"cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable"}) {
		t.Errorf("tolerations %v", tolerations)
	}

	rb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.karmada.io/v1alpha1",
		"kind":       "ResourceBinding",
		"metadata":   map[string]any{"name": "old-style", "namespace": "default"},
		"spec": map[string]any{
			"resource": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "default", "replicas": int64(4)},
		},
	}}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, rb) })
	v2 := &unstructured.Unstructured{}
	v2.SetAPIVersion("work.karmada.io/v1alpha2")
	v2.SetKind("ResourceBinding")
	if err := c.Get(ctx, client.ObjectKeyFromObject(rb), v2); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(v2.Object, "spec", "replicas"); r != 4 {
		t.Errorf("v1alpha2 spec.replicas = %d, want 4", r)
	}
}
