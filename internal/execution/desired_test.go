package execution

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func TestDesiredObject(t *testing.T) {
	m := deployment("nginx", 3)
	md := m["metadata"].(map[string]any)
	md["resourceVersion"] = "7"
	md["uid"] = "cp-uid"
	md["generation"] = int64(4)
	md["creationTimestamp"] = "2026-01-01T00:00:00Z"
	md["ownerReferences"] = []any{map[string]any{"kind": "ResourceBinding", "name": "x", "uid": "u", "apiVersion": "work.karmada.io/v1alpha2"}}
	md["managedFields"] = []any{map[string]any{"manager": "kubectl"}}
	md["annotations"] = map[string]any{"keep": "me", ManifestHashAnnotation: "stale"}
	m["status"] = map[string]any{"readyReplicas": int64(6)}
	w := testWork(t, m)

	got, hash, err := DesiredObject(w, w.Spec.Workload.Manifests[0].Raw)
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := map[string]any{
		"name":      "nginx",
		"namespace": "default",
		"labels": map[string]any{
			"app":                              "nginx",
			workv1alpha1.ManagedByKarmadaLabel: "true",
			workv1alpha1.WorkPermanentIDLabel:  "id-1",
		},
		"annotations": map[string]any{
			"keep":                               "me",
			workv1alpha1.WorkNamespaceAnnotation: "karmada-es-member1",
			workv1alpha1.WorkNameAnnotation:      "nginx-687f7fb96f",
			ManifestHashAnnotation:               hash,
		},
	}
	if diff := cmp.Diff(wantMeta, got.Object["metadata"]); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if _, ok := got.Object["status"]; ok {
		t.Error("status kept")
	}
	if len(hash) != 32 {
		t.Errorf("hash %q: want 32 hex digits", hash)
	}
}

func TestDesiredObjectHash(t *testing.T) {
	hashOf := func(w *workv1alpha1.Work) string {
		t.Helper()
		_, h, err := DesiredObject(w, w.Spec.Workload.Manifests[0].Raw)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hashOf(testWork(t, deployment("nginx", 3)))
	if again := hashOf(testWork(t, deployment("nginx", 3))); again != base {
		t.Errorf("same manifest hashed %s then %s", base, again)
	}
	// Server fields and status do not change what is applied.
	noisy := deployment("nginx", 3)
	noisy["status"] = map[string]any{"replicas": int64(9)}
	noisy["metadata"].(map[string]any)["resourceVersion"] = "99"
	if h := hashOf(testWork(t, noisy)); h != base {
		t.Errorf("status or resourceVersion changed the hash")
	}
	if h := hashOf(testWork(t, deployment("nginx", 4))); h == base {
		t.Errorf("replicas did not change the hash")
	}
	if h := hashOf(testWork(t, deployment("web", 3))); h == base {
		t.Errorf("the name did not change the hash")
	}
	other := testWork(t, deployment("nginx", 3))
	other.Name = "other-work"
	if h := hashOf(other); h == base {
		t.Errorf("the Work's identity did not change the hash")
	}
}

func TestDesiredObjectWithoutPermanentID(t *testing.T) {
	w := testWork(t, deployment("nginx", 1))
	delete(w.Labels, workv1alpha1.WorkPermanentIDLabel)
	got, _, err := DesiredObject(w, w.Spec.Workload.Manifests[0].Raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.GetLabels()[workv1alpha1.WorkPermanentIDLabel]; ok {
		t.Error("an empty permanent id was set")
	}
}

func TestTargets(t *testing.T) {
	cm := func(name, ns string) map[string]any {
		md := map[string]any{"name": name}
		if ns != "" {
			md["namespace"] = ns
		}
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}
	}
	nsObj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a"}}
	unknown := map[string]any{"apiVersion": "example.io/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "default"}}
	noName := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "default"}}

	w := testWork(t, deployment("nginx", 2), cm("c", ""), nsObj, unknown, noName, cm("d", "team-a"))
	targets, errs := Targets(w, testMapper())

	ids := make([]workv1alpha1.ResourceIdentifier, 0, len(targets))
	keys := make([]string, 0, len(targets))
	for _, tg := range targets {
		ids = append(ids, tg.Identifier())
		keys = append(keys, tg.Key())
	}
	wantIDs := []workv1alpha1.ResourceIdentifier{
		{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "nginx"},
		{Ordinal: 2, Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "team-a"},
		{Ordinal: 5, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "team-a", Name: "d"},
	}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("identifiers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"default/nginx", "team-a", "team-a/d"}, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}

	if len(errs) != 3 {
		t.Fatalf("errors: %v, want 3", errs)
	}
	ordinals := make([]int, 0, len(errs))
	for _, err := range errs {
		var me *ManifestError
		if !errors.As(err, &me) {
			t.Fatalf("%v is not a *ManifestError", err)
		}
		ordinals = append(ordinals, me.Ordinal)
	}
	if diff := cmp.Diff([]int{1, 3, 4}, ordinals); diff != "" {
		t.Errorf("failed ordinals (-want +got):\n%s", diff)
	}
	if !strings.Contains(errs[0].Error(), "has no namespace") {
		t.Errorf("namespaced without namespace: %v", errs[0])
	}
	if !meta.IsNoMatchError(errs[1]) || !NothingApplied(errs[1]) {
		t.Errorf("unknown kind: %v is not a no-match error", errs[1])
	}
	if !errors.Is(errs[2], ErrInvalidManifest) || !NothingApplied(errs[2]) {
		t.Errorf("nameless manifest: %v is not ErrInvalidManifest", errs[2])
	}
	if NothingApplied(errors.New("discovery failed")) {
		t.Error("a transient error counted as nothing applied")
	}
}
