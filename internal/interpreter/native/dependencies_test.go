package native

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
)

func TestGetDependencies(t *testing.T) {
	podSpec := map[string]any{
		"serviceAccountName": "runner",
		"imagePullSecrets":   list(map[string]any{"name": "registry"}),
		"containers": list(map[string]any{
			"name":    "app",
			"envFrom": list(map[string]any{"configMapRef": map[string]any{"name": "env"}}),
			"env": list(map[string]any{"name": "TOKEN", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "token", "key": "t"}}},
				map[string]any{"name": "MODE", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "env", "key": "mode"}}}),
		}),
		"volumes": list(
			map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "data"}},
			map[string]any{"name": "cfg", "projected": map[string]any{"sources": list(map[string]any{"secret": map[string]any{"name": "tls"}})}},
			map[string]any{"name": "csi", "csi": map[string]any{"driver": "x", "nodePublishSecretRef": map[string]any{"name": "csi-creds"}}},
		),
	}
	ref := func(kind, name string) configv1alpha1.DependentObjectReference {
		return configv1alpha1.DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: "shop", Name: name}
	}
	podDeps := []configv1alpha1.DependentObjectReference{
		ref("Secret", "registry"), ref("ConfigMap", "env"), ref("Secret", "token"),
		ref("PersistentVolumeClaim", "data"), ref("Secret", "tls"), ref("Secret", "csi-creds"), ref("ServiceAccount", "runner"),
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want []configv1alpha1.DependentObjectReference
	}{
		{"pod", newObj("v1", "Pod").set(podSpec, "spec").u(), podDeps},
		{"deployment", deployment().set(podSpec, "spec", "template", "spec").u(), podDeps},
		{"daemonset", newObj("apps/v1", "DaemonSet").set(podSpec, "spec", "template", "spec").u(), podDeps},
		{"cronjob", newObj("batch/v1", "CronJob").set(podSpec, "spec", "jobTemplate", "spec", "template", "spec").u(), podDeps},
		{"default service account is no dependency", newObj("v1", "Pod").
			set(map[string]any{"serviceAccountName": "default", "containers": list(map[string]any{"name": "c"})}, "spec").u(), nil},
		{"ingress TLS secrets and backend services", newObj("networking.k8s.io/v1", "Ingress").set(map[string]any{
			"tls":            list(map[string]any{"secretName": "cert"}),
			"defaultBackend": map[string]any{"service": map[string]any{"name": "fallback", "port": map[string]any{"number": int64(80)}}},
			"rules": list(map[string]any{"http": map[string]any{"paths": list(
				map[string]any{"path": "/", "pathType": "Prefix", "backend": map[string]any{"service": map[string]any{"name": "web"}}},
				map[string]any{"path": "/api", "pathType": "Prefix", "backend": map[string]any{"service": map[string]any{"name": "web"}}},
			)}}),
		}, "spec").u(), []configv1alpha1.DependentObjectReference{ref("Secret", "cert"), ref("Service", "fallback"), ref("Service", "web")}},
		{"service import: the derived service and its endpoint slices", newObj("multicluster.x-k8s.io/v1alpha1", "ServiceImport").
			set(map[string]any{"type": "ClusterSetIP", "ports": list(map[string]any{"port": int64(80)})}, "spec").u(),
			[]configv1alpha1.DependentObjectReference{ref("Service", "derived-app"), {APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Namespace: "shop",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/service-name": "derived-app"}}}}},
	}
	n := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, handled, err := n.GetDependencies(ctx(), tt.obj)
			if err != nil || !handled {
				t.Fatalf("handled %v, err %v", handled, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, _, err := n.GetDependencies(ctx(), deployment().set("x", "spec", "template", "spec", "volumes").u()); err == nil {
		t.Error("volumes \"x\" gave dependencies")
	}
}
