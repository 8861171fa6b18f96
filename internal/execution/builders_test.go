package execution

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// testWork is a Work in karmada-es-member1 carrying the given manifests.
func testWork(t testing.TB, manifests ...map[string]any) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace: "karmada-es-member1",
		Name:      "nginx-687f7fb96f",
		Labels:    map[string]string{workv1alpha1.WorkPermanentIDLabel: "id-1"},
	}}
	for _, m := range manifests {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w
}

// deployment is a Deployment manifest as the binding controller writes it.
func deployment(name string, replicas int64) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":      name,
			"namespace": "default",
			"labels":    map[string]any{"app": name},
		},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}, "creationTimestamp": nil},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "nginx", "image": "nginx:1.27", "resources": map[string]any{},
				}}},
			},
		},
	}
}

// testMapper knows Deployments, ConfigMaps and Namespaces.
func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	return m
}

// mustTarget resolves the only manifest of w.
func mustTarget(t testing.TB, w *workv1alpha1.Work) Target {
	t.Helper()
	targets, errs := Targets(w, testMapper())
	if len(errs) > 0 || len(targets) != 1 {
		t.Fatalf("Targets: %v, %d targets", errs, len(targets))
	}
	return targets[0]
}

// asObserved is desired as a member API server returns it: defaults and
// server fields added, zero values dropped.
func asObserved(t testing.TB, desired *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	obs := desired.DeepCopy()
	obs.SetUID("uid-1")
	obs.SetResourceVersion("42")
	obs.SetGeneration(1)
	obj := obs.Object
	spec := obj["spec"].(map[string]any)
	spec["progressDeadlineSeconds"] = int64(600)
	tpl := spec["template"].(map[string]any)
	delete(tpl["metadata"].(map[string]any), "creationTimestamp")
	c := tpl["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["terminationMessagePath"] = "/dev/termination-log"
	c["imagePullPolicy"] = "IfNotPresent"
	obj["status"] = map[string]any{"readyReplicas": int64(1)}
	return obs
}
