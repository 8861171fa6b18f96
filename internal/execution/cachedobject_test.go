package execution

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/internal/packedjson"
)

func TestCompactForCache(t *testing.T) {
	deleting := metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	member := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{
				"namespace": "apps", "name": "nginx", "uid": "u1", "resourceVersion": "42", "generation": int64(3),
				"labels": map[string]any{"karmada.io/managed": "true"},
				"annotations": map[string]any{
					"work.karmada.io/name":      "nginx-687f7fb96f",
					"work.karmada.io/namespace": "karmada-es-m1",
					"app":                       "nginx",
					lastAppliedAnnotation:       `{"huge":"copy"}`,
				},
				"managedFields": []any{map[string]any{"manager": "flotilla", "operation": "Apply"}},
			},
			"spec":   map[string]any{"replicas": int64(2)},
			"status": map[string]any{"readyReplicas": int64(2)},
		}}
		u.SetDeletionTimestamp(&deleting)
		return u
	}

	item, err := compactForCache(member())
	if err != nil {
		t.Fatal(err)
	}
	c, ok := item.(*packedjson.Object)
	if !ok {
		t.Fatalf("cached as %T, want *packedjson.Object", item)
	}
	// What keys, selectors and event handlers read comes without decoding.
	m, err := meta.Accessor(c)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetNamespace() != "apps" || m.GetName() != "nginx" || m.GetResourceVersion() != "42" || m.GetGeneration() != 3 ||
		m.GetDeletionTimestamp() == nil {
		t.Errorf("metadata not kept: %+v", c.ObjectMeta)
	}
	// Of labels and annotations, only the Work's name and namespace stay
	// outside the packed copy.
	wantAnnotations := map[string]string{"work.karmada.io/name": "nginx-687f7fb96f", "work.karmada.io/namespace": "karmada-es-m1"}
	if diff := cmp.Diff(wantAnnotations, m.GetAnnotations()); diff != "" || m.GetLabels() != nil {
		t.Errorf("unpacked annotations (-want +got):\n%s\nlabels %v, want none", diff, m.GetLabels())
	}
	if c.GetObjectKind().GroupVersionKind().Kind != "Deployment" {
		t.Errorf("kind %q, want Deployment", c.GetObjectKind().GroupVersionKind().Kind)
	}

	got, err := FromCache(c)
	if err != nil {
		t.Fatal(err)
	}
	want := member()
	want.SetManagedFields(nil)
	annotations := want.GetAnnotations()
	delete(annotations, lastAppliedAnnotation)
	want.SetAnnotations(annotations)
	if diff := cmp.Diff(want.Object, got.Object); diff != "" {
		t.Errorf("decoded object (-want +got):\n%s", diff)
	}

	// Each decode is the caller's own; copies share nothing it can change.
	got.Object["spec"].(map[string]any)["replicas"] = int64(5)
	copied := c.DeepCopyObject().(*packedjson.Object)
	copied.Annotations["changed"] = "yes"
	again, err := FromCache(c)
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(again.Object, "spec", "replicas"); r != 2 || c.Annotations["changed"] != "" {
		t.Errorf("the cached object changed through a decoded copy or a deep copy")
	}

	if _, err := FromCache("not an object"); err == nil {
		t.Error("FromCache accepted a string")
	}
}
