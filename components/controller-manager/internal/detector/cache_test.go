package detector

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestCompactTemplate(t *testing.T) {
	f := templateFilter{skippedNamespaces: []*regexp.Regexp{regexp.MustCompile("^(?:skipped)$")}}
	deployment := func(ns string) *unstructured.Unstructured {
		return obj("apps/v1", "Deployment", ns, "web",
			withLabels(map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id", "app": "web"}),
			withField(int64(3), "spec", "replicas"),
			withField(int64(2), "status", "readyReplicas"),
			withField([]any{map[string]any{"manager": "kubectl"}}, "metadata", "managedFields"),
			func(u *unstructured.Unstructured) { u.SetResourceVersion("7") })
	}

	item, err := f.compact(deployment("apps"))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := cachedTemplateOf(item)
	if !ok {
		t.Fatalf("cached as %T", item)
	}
	if c.ignored {
		t.Error("a template in an ordinary namespace is ignored")
	}
	m, err := meta.Accessor(c)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetNamespace() != "apps" || m.GetName() != "web" || m.GetResourceVersion() != "7" || m.GetLabels()["app"] != "web" {
		t.Errorf("metadata not kept: %+v", c.ObjectMeta)
	}
	if got := keyOf(deploymentsGVR, c); got.storeKey() != "apps/web" {
		t.Errorf("key %s, want apps/web", got.storeKey())
	}
	if idx, _ := claimIndexFunc(c); len(idx) != 1 || idx[0] != ppClaimIndexValue("pp-id") {
		t.Errorf("claim index %v, want [%s]", idx, ppClaimIndexValue("pp-id"))
	}
	want := deployment("apps")
	want.SetManagedFields(nil)
	if sel := c.selectable(); sel.Kind != "Deployment" || sel.APIVersion != "apps/v1" || sel.Name != "web" || sel.Labels["app"] != "web" {
		t.Errorf("selectable %+v", sel)
	}
	got, err := c.Unstructured()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Object, got.Object); diff != "" {
		t.Errorf("decoded template (-want +got):\n%s", diff)
	}

	skipped, err := f.compact(deployment("skipped"))
	if err != nil {
		t.Fatal(err)
	}
	if !skipped.(*cachedTemplate).ignored {
		t.Error("a template in a skipped namespace is not marked ignored")
	}

	// A status write gives the same digest; a spec change another.
	status := deployment("apps")
	_ = unstructured.SetNestedField(status.Object, int64(3), "status", "readyReplicas")
	status.SetResourceVersion("8")
	statusItem, err := f.compact(status)
	if err != nil {
		t.Fatal(err)
	}
	scaled := deployment("apps")
	_ = unstructured.SetNestedField(scaled.Object, int64(4), "spec", "replicas")
	scaledItem, err := f.compact(scaled)
	if err != nil {
		t.Fatal(err)
	}
	if statusItem.(*cachedTemplate).digest != c.digest {
		t.Error("a status change changed the digest")
	}
	if scaledItem.(*cachedTemplate).digest == c.digest {
		t.Error("a spec change kept the digest")
	}
}
