package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// replicas is a rule setting spec.replicas on every cluster.
func replicas(n string) specOpt {
	return withRule(nil, plain(plaintext(replace, "/spec/replicas", n)))
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name         string
		obj          *unstructured.Unstructured
		ops          []policyv1alpha1.OverridePolicy
		cops         []policyv1alpha1.ClusterOverridePolicy
		wantOrder    []string
		wantReplicas int64
	}{{
		name:         "an OverridePolicy wins over a ClusterOverridePolicy, even a more precise one",
		ops:          []policyv1alpha1.OverridePolicy{op("ns-wide", replicas("7"))},
		cops:         []policyv1alpha1.ClusterOverridePolicy{cop("by-name", selecting(deploymentNamed("web")), replicas("2"))},
		wantOrder:    []string{"ClusterOverridePolicy/by-name[0]", "OverridePolicy/default/ns-wide[0]"},
		wantReplicas: 7,
	}, {
		name: "a name selector wins over a kind selector, whatever the names",
		ops: []policyv1alpha1.OverridePolicy{
			op("a-by-name", selecting(deploymentNamed("web")), replicas("1")),
			op("z-by-kind", selecting(deployments()), replicas("2")),
		},
		wantOrder:    []string{"OverridePolicy/default/z-by-kind[0]", "OverridePolicy/default/a-by-name[0]"},
		wantReplicas: 1,
	}, {
		name: "no selectors, kind, labels, name: least precise first",
		ops: []policyv1alpha1.OverridePolicy{
			op("a-name", selecting(deploymentNamed("web")), replicas("4")),
			op("b-labels", selecting(deploymentsLabelled("app", "web")), replicas("3")),
			op("c-kind", selecting(deployments()), replicas("2")),
			op("d-all", replicas("1")),
		},
		wantOrder: []string{
			"OverridePolicy/default/d-all[0]",
			"OverridePolicy/default/c-kind[0]",
			"OverridePolicy/default/b-labels[0]",
			"OverridePolicy/default/a-name[0]",
		},
		wantReplicas: 4,
	}, {
		name: "the same precision goes by name, so the last name wins",
		ops: []policyv1alpha1.OverridePolicy{
			op("beta", selecting(deployments()), replicas("2")),
			op("alpha", selecting(deployments()), replicas("1")),
		},
		wantOrder:    []string{"OverridePolicy/default/alpha[0]", "OverridePolicy/default/beta[0]"},
		wantReplicas: 2,
	}, {
		name: "ClusterOverridePolicies sort the same way among themselves",
		cops: []policyv1alpha1.ClusterOverridePolicy{
			cop("a-name", selecting(deploymentNamed("web")), replicas("3")),
			cop("b-kind", selecting(deployments()), replicas("2")),
			cop("c-labels", selecting(deploymentsLabelled("app", "web")), replicas("5")),
		},
		wantOrder:    []string{"ClusterOverridePolicy/b-kind[0]", "ClusterOverridePolicy/c-labels[0]", "ClusterOverridePolicy/a-name[0]"},
		wantReplicas: 3,
	}, {
		name: "rules of a policy apply in order; rules for other clusters are skipped",
		ops: []policyv1alpha1.OverridePolicy{op("p",
			replicas("1"),
			withRule(names("member2"), plain(plaintext(replace, "/spec/replicas", "9"))),
			replicas("2"),
		)},
		wantOrder:    []string{"OverridePolicy/default/p[0]", "OverridePolicy/default/p[2]"},
		wantReplicas: 2,
	}, {
		name: "OverridePolicies of other namespaces and selectors for other namespaces are ignored",
		ops: []policyv1alpha1.OverridePolicy{
			opIn("prod", "elsewhere", replicas("8")),
			op("points-elsewhere", selecting(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod"}), replicas("9")),
		},
		wantReplicas: 3,
	}, {
		name:         "a cluster-scoped template gets ClusterOverridePolicies only",
		obj:          fromYAML(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\nspec: {replicas: 3}\n"),
		ops:          []policyv1alpha1.OverridePolicy{op("ns", replicas("7")), opIn("", "no-ns", replicas("8"))},
		cops:         []policyv1alpha1.ClusterOverridePolicy{cop("c", replicas("2"))},
		wantOrder:    []string{"ClusterOverridePolicy/c[0]"},
		wantReplicas: 2,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := tt.obj
			if obj == nil {
				obj = deployment(t)
			}
			m := Matching(obj, cluster("member1"), tt.ops, tt.cops)
			if diff := cmp.Diff(tt.wantOrder, refs(m)); diff != "" {
				t.Errorf("Matching order (-want +got):\n%s", diff)
			}
			got, applied, err := Apply(obj, cluster("member1"), tt.ops, tt.cops)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantOrder, refs(applied)); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != tt.wantReplicas {
				t.Errorf("spec.replicas = %d, want %d", r, tt.wantReplicas)
			}
		})
	}
}

// Within a rule, overrider kinds run in Karmada's fixed order whatever order
// the YAML lists them in: plaintext runs last, so it sees (and can undo)
// what the others did.
func TestOverriderKindOrder(t *testing.T) {
	o := policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{
			// Overwrites the image the imageOverrider rewrote.
			plaintext(replace, "/spec/template/spec/containers/0/image", `"final:1"`),
			// Sees the label the labelsOverrider added.
			plaintext(replace, "/metadata/labels/stage", `"plaintext"`),
			// Sees the annotation the annotationsOverrider added.
			plaintext(remove, "/metadata/annotations/stage", ""),
		},
		AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "stage", "annotations")},
		LabelsOverrider:      []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "stage", "labels")},
		ArgsOverrider:        []policyv1alpha1.CommandArgsOverrider{cmdArgs("app", add, "args")},
		CommandOverrider:     []policyv1alpha1.CommandArgsOverrider{cmdArgs("app", add, "command")},
		ImageOverrider:       []policyv1alpha1.ImageOverrider{imageOp(policyv1alpha1.Registry, replace, "r.io")},
	}
	got, _, err := Apply(deployment(t), cluster("m"), nil, []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, o))})
	if err != nil {
		t.Fatal(err)
	}
	want := deployment(t,
		set("spec.template.spec.containers.0.image", "final:1"),
		set("spec.template.spec.containers.1.image", "r.io/org/team/proxy:v1"),
		set("spec.template.spec.initContainers.0.image", "r.io/busybox"),
		set("spec.template.spec.containers.0.command", strs("nginx", "command")),
		set("spec.template.spec.containers.0.args", strs("-g", "daemon off;", "args")),
		withLabel("stage", "plaintext"),
	)
	if diff := cmp.Diff(want.Object, withoutRecord(got).Object); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// One Renderer renders a template differently per cluster.
func TestPerClusterRendering(t *testing.T) {
	r := NewRenderer(
		[]policyv1alpha1.OverridePolicy{op("eu-mirror", withRule(
			&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: pairs("region", "eu")}},
			policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{imageOp(policyv1alpha1.Registry, replace, "eu.mirror.io")}},
		))},
		[]policyv1alpha1.ClusterOverridePolicy{cop("edge-small", withRule(names("edge"), plain(plaintext(replace, "/spec/replicas", "1"))))},
	)
	tests := []struct {
		cluster string
		labels  []string
		want    []objOpt
		applied []string
	}{
		{cluster: "edge", want: []objOpt{set("spec.replicas", int64(1))}, applied: []string{"ClusterOverridePolicy/edge-small[0]"}},
		{cluster: "eu-1", labels: []string{"region", "eu"}, want: []objOpt{
			set("spec.template.spec.containers.0.image", "eu.mirror.io/nginx:1.25"),
			set("spec.template.spec.containers.1.image", "eu.mirror.io/org/team/proxy:v1"),
			set("spec.template.spec.initContainers.0.image", "eu.mirror.io/busybox"),
		}, applied: []string{"OverridePolicy/default/eu-mirror[0]"}},
		{cluster: "us-1", labels: []string{"region", "us"}},
	}
	for _, tt := range tests {
		t.Run(tt.cluster, func(t *testing.T) {
			got, applied, err := r.Apply(deployment(t), cluster(tt.cluster, clusterLabels(tt.labels...)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(deployment(t, tt.want...).Object, withoutRecord(got).Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.applied, refs(applied)); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeprecatedForm(t *testing.T) {
	cops := []policyv1alpha1.ClusterOverridePolicy{
		cop("old", deprecatedForm(names("member1"), plain(plaintext(replace, "/spec/replicas", "5")))),
		cop("old-everywhere", selecting(deploymentNamed("web")), deprecatedForm(nil, policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "old", "yes")},
		})),
	}
	got, applied, err := Apply(deployment(t), cluster("member1"), nil, cops)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ClusterOverridePolicy/old[deprecated]", "ClusterOverridePolicy/old-everywhere[deprecated]"}, refs(applied)); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	want := deployment(t, set("spec.replicas", int64(5)), withLabel("old", "yes"))
	if diff := cmp.Diff(want.Object, withoutRecord(got).Object); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Its targetCluster limits it like a rule's.
	got, applied, err = Apply(deployment(t), cluster("member2"), nil, cops)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ClusterOverridePolicy/old-everywhere[deprecated]"}, refs(applied)); diff != "" {
		t.Errorf("applied on member2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(deployment(t, withLabel("old", "yes")).Object, withoutRecord(got).Object); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
