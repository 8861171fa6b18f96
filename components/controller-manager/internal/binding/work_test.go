package binding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func testRB() *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "nginx-deployment", Labels: map[string]string{
			workv1alpha2.ResourceBindingPermanentIDLabel: "rb-id",
		}},
		Spec: workv1alpha2.ResourceBindingSpec{PreserveResourcesOnDeletion: ptr.To(true)},
	}
}

func TestBuildWork(t *testing.T) {
	manifest := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {policy.karmada.io/applied-overrides: "[]"}}}`)
	r := &rendered{manifest: manifest, conflictResolution: "overwrite"}
	d, err := buildWork(ViewOf(testRB()), r, target{cluster: "m1", suspend: true}, workIdentity{namespace: "karmada-es-m1", name: "c-1", id: "work-id"})
	if err != nil {
		t.Fatal(err)
	}
	w := d.newWork()
	want := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "karmada-es-m1",
			Name:      "c-1",
			Labels: map[string]string{
				"resourcebinding.karmada.io/permanent-id": "rb-id",
				"work.karmada.io/permanent-id":            "work-id",
			},
			Annotations: map[string]string{
				"resourcebinding.karmada.io/namespace": "apps",
				"resourcebinding.karmada.io/name":      "nginx-deployment",
				"work.karmada.io/conflict-resolution":  "overwrite",
				"policy.karmada.io/applied-overrides":  "[]",
			},
			Finalizers: []string{"karmada.io/execution-controller"},
		},
		Spec: workv1alpha1.WorkSpec{
			Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{
				Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"policy.karmada.io/applied-overrides":"[]"},"name":"c"}}`),
			}}}},
			SuspendDispatching:          ptr.To(true),
			PreserveResourcesOnDeletion: ptr.To(true),
		},
	}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Errorf("new Work (-want +got):\n%s", diff)
	}
	wantDrops := []string{
		workv1alpha2.ClusterResourceBindingAnnotationKey, policyv1alpha1.AppliedClusterOverrides,
	}
	if diff := cmp.Diff(wantDrops, d.dropAnnotations); diff != "" {
		t.Errorf("dropped annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel}, d.dropLabels); diff != "" {
		t.Errorf("dropped labels (-want +got):\n%s", diff)
	}
}

func TestUpToDate(t *testing.T) {
	manifest := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: "1"}}`)
	d, err := buildWork(ViewOf(testRB()), &rendered{manifest: manifest, conflictResolution: "abort"}, target{cluster: "m1"},
		workIdentity{namespace: "karmada-es-m1", name: "c-1", id: "work-id"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*workv1alpha1.Work)
		want   bool
	}{
		{"as built", func(*workv1alpha1.Work) {}, true},
		{"others' labels, annotations and finalizers are kept", func(w *workv1alpha1.Work) {
			w.Labels["team"] = "a"
			w.Annotations["note"] = "x"
			w.Finalizers = append(w.Finalizers, "example.com/f")
		}, true},
		{"manifest re-encoded by the API server", func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"kind":"ConfigMap", "apiVersion":"v1","data":{"k":"1"},"metadata":{"name":"c"}}`)
		}, true},
		{"manifest changed", func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"2"}}`)
		}, false},
		{"manifest unreadable", func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests[0].Raw = []byte(`{`) }, false},
		{"extra manifest", func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, w.Spec.Workload.Manifests[0])
		}, false},
		{"unset suspend equals false", func(w *workv1alpha1.Work) { w.Spec.SuspendDispatching = nil }, true},
		{"suspended", func(w *workv1alpha1.Work) { w.Spec.SuspendDispatching = ptr.To(true) }, false},
		{"preserve changed", func(w *workv1alpha1.Work) { w.Spec.PreserveResourcesOnDeletion = ptr.To(false) }, false},
		{"binding id changed", func(w *workv1alpha1.Work) { w.Labels["resourcebinding.karmada.io/permanent-id"] = "other" }, false},
		{"another kind's binding label", func(w *workv1alpha1.Work) { w.Labels["clusterresourcebinding.karmada.io/permanent-id"] = "x" }, false},
		{"stale applied overrides", func(w *workv1alpha1.Work) { w.Annotations["policy.karmada.io/applied-overrides"] = "[]" }, false},
		{"finalizer missing", func(w *workv1alpha1.Work) { w.Finalizers = nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := d.newWork()
			tt.mutate(w)
			got, err := d.upToDate(w)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("upToDate = %v, want %v", got, tt.want)
			}
			if got {
				return
			}
			d.apply(w)
			if ok, err := d.upToDate(w); err != nil || !ok {
				t.Errorf("after apply: upToDate = %v, %v; want true", ok, err)
			}
		})
	}
}
