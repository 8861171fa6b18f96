package binding_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// A JSON fieldOverrider leaves in the Work, and so in the member, the
// string Karmada writes: the whole document re-marshalled compactly.
func TestJSONFieldOverriderOutputIsKarmadas(t *testing.T) {
	start(t, 2)
	ns := namespace(t, "fieldoverrider")
	op := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "json"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			Overriders: policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{
				FieldPath: "/data/deploy.json",
				JSON: []policyv1alpha1.JSONPatchOperation{
					{SubPath: "/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte("5")}},
					{SubPath: "/name", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`"nginx-helper"`)}},
				},
			}}},
		}}},
	}
	if err := apiClient.Create(t.Context(), op); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Data:       map[string]string{"deploy.json": "{\n  \"replicas\": 3,\n  \"name\": \"nginx\"\n}\n"},
	}
	if err := apiClient.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      names.Binding(cm.Name, "ConfigMap"),
			Labels:    map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-" + ns + "-settings"},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: resourceOf(cm, "v1", "ConfigMap"),
			Clusters: targets("member1", 0),
		},
	}
	if err := apiClient.Create(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	const want = `{"replicas":5,"name":"nginx-helper"}`
	var got string
	waitWork(t, workKey("member1", ns, cm.Name, "ConfigMap"), "holds the overridden document", func(w *workv1alpha1.Work) bool {
		got, _, _ = unstructured.NestedString(manifestOf(t, w).Object, "data", "deploy.json")
		return got != cm.Data["deploy.json"]
	})
	if got != want {
		t.Errorf("data[deploy.json] = %q, want %q", got, want)
	}
}
