package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

const (
	add     = policyv1alpha1.OverriderOpAdd
	remove  = policyv1alpha1.OverriderOpRemove
	replace = policyv1alpha1.OverriderOpReplace
)

func TestPlaintext(t *testing.T) {
	tests := []struct {
		name string
		ops  []policyv1alpha1.PlaintextOverrider
		want objOpt
	}{{
		name: "replace a number",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(replace, "/spec/replicas", "5")},
		want: set("spec.replicas", int64(5)),
	}, {
		name: "add a new key with an object value",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(add, "/spec/template/spec/nodeSelector", `{"disk":"ssd","tier":1}`)},
		want: set("spec.template.spec.nodeSelector", map[string]any{"disk": "ssd", "tier": int64(1)}),
	}, {
		name: "add over an existing key replaces it",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(add, "/spec/replicas", "1")},
		want: set("spec.replicas", int64(1)),
	}, {
		name: "add inserts into an array at an index",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(add, "/spec/template/spec/containers/0/args/1", `"-q"`)},
		want: set("spec.template.spec.containers.0.args", strs("-g", "-q", "daemon off;")),
	}, {
		name: "add with - appends to an array",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(add, "/spec/template/spec/containers/0/args/-", `"-q"`)},
		want: set("spec.template.spec.containers.0.args", strs("-g", "daemon off;", "-q")),
	}, {
		name: "add at the length appends",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(add, "/spec/template/spec/containers/0/args/2", `"-q"`)},
		want: set("spec.template.spec.containers.0.args", strs("-g", "daemon off;", "-q")),
	}, {
		name: "negative index counts from the end, as evanphx/json-patch does",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(replace, "/spec/template/spec/containers/-1/image", `"envoy:1"`)},
		want: set("spec.template.spec.containers.1.image", "envoy:1"),
	}, {
		name: "remove an array element",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(remove, "/spec/template/spec/containers/1", "")},
		want: del("spec.template.spec.containers.1"),
	}, {
		name: "remove a key",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(remove, "/spec/template/spec/initContainers", "")},
		want: del("spec.template.spec.initContainers"),
	}, {
		name: "escaped tokens address keys with / and ~",
		ops: []policyv1alpha1.PlaintextOverrider{
			plaintext(add, "/metadata/labels/app.kubernetes.io~1name", `"web"`),
			plaintext(add, "/metadata/labels/a~0b", `"c"`),
		},
		want: func(t testing.TB, u *unstructured.Unstructured) {
			t.Helper()
			withLabel("app.kubernetes.io/name", "web")(t, u)
			withLabel("a~b", "c")(t, u)
		},
	}, {
		name: "add without a value sets null, like Karmada",
		ops:  []policyv1alpha1.PlaintextOverrider{plaintext(add, "/spec/paused", "")},
		want: set("spec.paused", nil),
	}, {
		name: "operations run in order: a later one sees an earlier one",
		ops: []policyv1alpha1.PlaintextOverrider{
			plaintext(add, "/spec/strategy", `{}`),
			plaintext(add, "/spec/strategy/type", `"Recreate"`),
		},
		want: set("spec.strategy", map[string]any{"type": "Recreate"}),
	}, {
		name: "floats and booleans keep their JSON types",
		ops: []policyv1alpha1.PlaintextOverrider{
			plaintext(add, "/spec/x", `1.5`),
			plaintext(add, "/spec/y", `true`),
		},
		want: func(t testing.TB, u *unstructured.Unstructured) {
			t.Helper()
			set("spec.x", 1.5)(t, u)
			set("spec.y", true)(t, u)
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := deployment(t)
			got, _, err := Apply(in, cluster("member1"), nil, []policyv1alpha1.ClusterOverridePolicy{
				cop("p", withRule(nil, plain(tt.ops...))),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := deployment(t, tt.want)
			if diff := cmp.Diff(want.Object, withoutRecord(got).Object); diff != "" {
				t.Errorf("rendered object (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(deployment(t).Object, in.Object); diff != "" {
				t.Errorf("input changed (-want +got):\n%s", diff)
			}
		})
	}
}

// A value inserted by plaintext must not be shared between the objects of
// two clusters: a later overrider changing one would change the other.
func TestPlaintextValueNotShared(t *testing.T) {
	r := NewRenderer(nil, []policyv1alpha1.ClusterOverridePolicy{
		cop("p", withRule(nil, plain(plaintext(add, "/spec/template/spec/nodeSelector", `{"disk":"ssd"}`)))),
	})
	a, _, err := r.Apply(deployment(t), cluster("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := r.Apply(deployment(t), cluster("b"))
	if err != nil {
		t.Fatal(err)
	}
	a.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"].(map[string]any)["disk"] = "hdd"
	got := b.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"].(map[string]any)["disk"]
	if got != "ssd" {
		t.Errorf("cluster b's nodeSelector changed with cluster a's: disk=%v", got)
	}
}
