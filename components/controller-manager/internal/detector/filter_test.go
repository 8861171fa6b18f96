package detector

import (
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind, ns, name string, mods ...func(*unstructured.Unstructured)) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	for _, m := range mods {
		m(u)
	}
	return u
}

func withLabels(l map[string]string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { u.SetLabels(l) }
}

func withField(value any, path ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(u.Object, value, path...); err != nil {
			panic(err)
		}
	}
}

func TestIgnored(t *testing.T) {
	f := templateFilter{skippedNamespaces: []*regexp.Regexp{regexp.MustCompile("^(?:istio-.*)$")}}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"a deployment", obj("apps/v1", "Deployment", "team", "web"), false},
		{"kube-system", obj("apps/v1", "Deployment", "kube-system", "dns"), true},
		{"karmada-system", obj("v1", "ConfigMap", "karmada-system", "cfg"), true},
		{"karmada-cluster", obj("v1", "Secret", "karmada-cluster", "member1"), true},
		{"an execution namespace", obj("v1", "ConfigMap", "karmada-es-member1", "x"), true},
		{"a skipped namespace", obj("v1", "ConfigMap", "istio-system", "x"), true},
		{"a reserved Namespace", obj("v1", "Namespace", "", "kube-public"), true},
		{"a skipped Namespace", obj("v1", "Namespace", "", "istio-ingress"), true},
		{"a Namespace", obj("v1", "Namespace", "", "team"), false},
		{"a cluster-scoped object", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "kube-view"), false},
		{"a service account token", obj("v1", "Secret", "team", "tok", withField("kubernetes.io/service-account-token", "type")), true},
		{"an opaque secret", obj("v1", "Secret", "team", "s", withField("Opaque", "type")), false},
		{"the control plane's own", obj("v1", "ConfigMap", "team", "x", withLabels(map[string]string{"karmada.io/system": "true"})), true},
		{"claimed-by a policy kind", obj("v1", "Service", "team", "x", withLabels(map[string]string{"resourcetemplate.karmada.io/claimed-by": "PropagationPolicy"})), false},
		{"claimed by another controller", obj("v1", "Service", "team", "x", withLabels(map[string]string{"resourcetemplate.karmada.io/claimed-by": "MultiClusterService"})), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.ignored(tt.obj); got != tt.want {
				t.Errorf("ignored = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSpecChanged(t *testing.T) {
	base := func() *unstructured.Unstructured {
		return obj("apps/v1", "Deployment", "team", "web",
			withLabels(map[string]string{"app": "web"}),
			withField(int64(3), "spec", "replicas"),
			withField(int64(1), "status", "readyReplicas"),
			withField("1", "metadata", "resourceVersion"),
			withField(int64(1), "metadata", "generation"),
		)
	}
	tests := []struct {
		name   string
		modify func(*unstructured.Unstructured)
		want   bool
	}{
		{"nothing", func(*unstructured.Unstructured) {}, false},
		{"status and resource version", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(3), "status", "readyReplicas")
			u.SetResourceVersion("2")
		}, false},
		{"managed fields", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"manager": "x"}}, "metadata", "managedFields")
		}, false},
		{"status removed", func(u *unstructured.Unstructured) { delete(u.Object, "status") }, false},
		{"spec", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
		}, true},
		{"labels", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web", "tier": "front"}) }, true},
		{"annotations added", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "b"}) }, true},
		{"a top-level field added", func(u *unstructured.Unstructured) { u.Object["data"] = map[string]any{"k": "v"} }, true},
		{"spec removed", func(u *unstructured.Unstructured) { delete(u.Object, "spec") }, true},
		{"labels removed", func(u *unstructured.Unstructured) { u.SetLabels(nil) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, n := base(), base()
			tt.modify(n)
			od, err := specDigest(o)
			if err != nil {
				t.Fatal(err)
			}
			nd, err := specDigest(n)
			if err != nil {
				t.Fatal(err)
			}
			if got := od != nd; got != tt.want {
				t.Errorf("digests differ = %v, want %v", got, tt.want)
			}
		})
	}
}
