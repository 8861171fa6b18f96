package overrides

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func imageOp(c policyv1alpha1.ImageComponent, operator policyv1alpha1.OverriderOperator, value string) policyv1alpha1.ImageOverrider {
	return policyv1alpha1.ImageOverrider{Component: c, Operator: operator, Value: value}
}

// Karmada's documented semantics: add appends the value to the component,
// replace sets it, remove clears it. The examples of Karmada's user guide
// (myapp:1.0.0) are the first cases.
func TestOverrideImage(t *testing.T) {
	const (
		reg  = policyv1alpha1.Registry
		repo = policyv1alpha1.Repository
		tag  = policyv1alpha1.Tag
	)
	tests := []struct {
		image string
		o     policyv1alpha1.ImageOverrider
		want  string
	}{
		// Karmada user guide examples.
		{"myapp:1.0.0", imageOp(reg, add, "test-repo"), "test-repo/myapp:1.0.0"},
		{"myapp:1.0.0", imageOp(reg, replace, "test-repo"), "test-repo/myapp:1.0.0"},
		{"fictional.registry.us/myapp:1.0.0", imageOp(reg, remove, ""), "myapp:1.0.0"},
		{"myapp:1.0.0", imageOp(tag, replace, "2.0.0"), "myapp:2.0.0"},

		// Registry.
		{"nginx", imageOp(reg, add, "registry.cn.io"), "registry.cn.io/nginx"},
		{"docker.io/library/nginx:1.25", imageOp(reg, add, ".cn"), "docker.io.cn/library/nginx:1.25"},
		{"localhost:5000/nginx:1.0", imageOp(reg, replace, "my.registry:5000"), "my.registry:5000/nginx:1.0"},
		{"ghcr.io/org/team/app:v1", imageOp(reg, replace, "quay.io"), "quay.io/org/team/app:v1"},
		{"nginx@" + digestA, imageOp(reg, replace, "r.io"), "r.io/nginx@" + digestA},
		{"localhost:5000/nginx:1.0", imageOp(reg, remove, ""), "nginx:1.0"},
		{"ghcr.io/org/team/app:v1", imageOp(reg, remove, ""), "org/team/app:v1"},
		{"nginx", imageOp(reg, remove, ""), "nginx"},

		// Repository.
		{"docker.io/library/nginx:1.25", imageOp(repo, replace, "library/caddy"), "docker.io/library/caddy:1.25"},
		{"ghcr.io/org/team/app:v1", imageOp(repo, add, "-debug"), "ghcr.io/org/team/app-debug:v1"},
		{"localhost:5000/nginx@" + digestA, imageOp(repo, replace, "caddy"), "localhost:5000/caddy@" + digestA},

		// Tag: the tag, or the digest when there is no tag.
		{"nginx", imageOp(tag, add, "1.26"), "nginx:1.26"},
		{"nginx", imageOp(tag, replace, "1.26"), "nginx:1.26"},
		{"nginx:1.25", imageOp(tag, add, "-alpine"), "nginx:1.25-alpine"},
		{"localhost:5000/nginx:1.0", imageOp(tag, replace, "v2"), "localhost:5000/nginx:v2"},
		{"localhost:5000/nginx", imageOp(tag, replace, "v2"), "localhost:5000/nginx:v2"},
		{"nginx:1.25@" + digestA, imageOp(tag, replace, "1.26"), "nginx:1.26"},
		{"nginx:1.25", imageOp(tag, replace, digestB), "nginx@" + digestB},
		{"nginx:1.25", imageOp(tag, replace, "@"+digestB), "nginx@" + digestB},
		{"nginx@" + digestA, imageOp(tag, replace, digestB), "nginx@" + digestB},
		{"nginx:1.25", imageOp(tag, remove, ""), "nginx"},
		{"nginx:1.25@" + digestA, imageOp(tag, remove, ""), "nginx@" + digestA},
		{"nginx@" + digestA, imageOp(tag, remove, ""), "nginx"},
		{"localhost:5000/nginx", imageOp(tag, remove, ""), "localhost:5000/nginx"},
	}
	for _, tt := range tests {
		t.Run(tt.image+" "+string(tt.o.Operator)+" "+string(tt.o.Component)+" "+tt.o.Value, func(t *testing.T) {
			got, err := overrideImage(tt.image, &tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOverrideImageErrors(t *testing.T) {
	tests := []struct {
		image   string
		o       policyv1alpha1.ImageOverrider
		wantErr string
	}{
		{"nginx:1.25", imageOp(policyv1alpha1.Tag, replace, "bad tag!"), "invalid tag"},
		{"nginx:1.25", imageOp(policyv1alpha1.Tag, replace, "sha256:short"), "invalid digest"},
		{"nginx:1.25", imageOp(policyv1alpha1.Registry, add, ""), "needs a value"},
		{"nginx:1.25", imageOp(policyv1alpha1.Repository, replace, "Upper/Case"), "invalid image"},
		{"nginx:1.25", imageOp(policyv1alpha1.Repository, remove, ""), "without a name"},
		{"nginx:1.25", imageOp(policyv1alpha1.Registry, replace, "bad registry"), "invalid image"},
		{"nginx:1.25", imageOp("Digest", replace, "x"), "unknown image component"},
		{"nginx:", imageOp(policyv1alpha1.Tag, remove, ""), "invalid tag"},
	}
	for _, tt := range tests {
		t.Run(tt.wantErr, func(t *testing.T) {
			got, err := overrideImage(tt.image, &tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("overrideImage(%q) = %q, %v; want an error containing %q", tt.image, got, err, tt.wantErr)
			}
		})
	}
}

// Without a predicate every container and init container image of the
// known workload kinds is rewritten, each at its kind's path.
func TestImageOverriderPerKind(t *testing.T) {
	podSpec := `
      containers:
      - {name: app, image: nginx:1.25}
      - {name: sidecar, image: "localhost:5000/proxy:v1"}
      initContainers:
      - {name: init, image: busybox}`
	wantSpec := `
      containers:
      - {name: app, image: mirror.io/nginx:1.25}
      - {name: sidecar, image: "mirror.io/proxy:v1"}
      initContainers:
      - {name: init, image: mirror.io/busybox}`
	wrap := func(kind, spec string) string {
		switch kind {
		case "Pod":
			return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:" + strings.ReplaceAll(spec, "\n    ", "\n")
		case "CronJob":
			return "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: p, namespace: default}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:" + strings.ReplaceAll(spec, "\n", "\n    ")
		default:
			return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata: {name: p, namespace: default}\nspec:\n  template:\n    spec:" + spec
		}
	}
	o := policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{imageOp(policyv1alpha1.Registry, replace, "mirror.io")}}
	for _, kind := range []string{"Pod", "ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job", "CronJob"} {
		t.Run(kind, func(t *testing.T) {
			got, _, err := Apply(fromYAML(t, wrap(kind, podSpec)), cluster("m"), nil, []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, o))})
			if err != nil {
				t.Fatal(err)
			}
			want := fromYAML(t, wrap(kind, wantSpec))
			if diff := cmp.Diff(want.Object, withoutRecord(got).Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("other kinds are left alone", func(t *testing.T) {
		in := fromYAML(t, wrap("Deployment", podSpec))
		in.SetKind("Rollout")
		got, _, err := Apply(in, cluster("m"), nil, []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, o))})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(in.Object, withoutRecord(got).Object); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestImageOverriderPredicate(t *testing.T) {
	crd := func(image any) *unstructured.Unstructured {
		u := fromYAML(t, "apiVersion: example.io/v1\nkind: App\nmetadata: {name: a, namespace: default}\nspec:\n  main:\n    image: x\n  other:\n    image: nginx:1.0\n")
		u.Object["spec"].(map[string]any)["main"].(map[string]any)["image"] = image
		return u
	}
	o := policyv1alpha1.ImageOverrider{
		Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/main/image"},
		Component: policyv1alpha1.Tag, Operator: replace, Value: "2.0",
	}
	cops := []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{o}}))}
	got, _, err := Apply(crd("ghcr.io/org/app:1.0"), cluster("m"), nil, cops)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(crd("ghcr.io/org/app:2.0").Object, withoutRecord(got).Object); diff != "" {
		t.Errorf("only the predicate's image changes (-want +got):\n%s", diff)
	}

	// The predicate also picks one container of a Deployment.
	o.Predicate.Path = "/spec/template/spec/containers/1/image"
	cops = []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{o}}))}
	got, _, err = Apply(deployment(t), cluster("m"), nil, cops)
	if err != nil {
		t.Fatal(err)
	}
	want := deployment(t, set("spec.template.spec.containers.1.image", "ghcr.io/org/team/proxy:2.0"))
	if diff := cmp.Diff(want.Object, withoutRecord(got).Object); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
