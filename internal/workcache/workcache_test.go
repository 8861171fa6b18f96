package workcache

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/packedjson"
)

const (
	deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","namespace":"apps","labels":{"app":"nginx"}},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}`
	status     = `{"readyReplicas":2,"replicas":2}`
)

func work() *workv1alpha1.Work {
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-m1", Name: "nginx-687f7fb96f"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(deployment)}},
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)}},
		}}},
		Status: workv1alpha1.WorkStatus{ManifestStatuses: []workv1alpha1.ManifestStatus{
			{Identifier: workv1alpha1.ResourceIdentifier{Ordinal: 0, Kind: "Deployment"}, Status: &runtime.RawExtension{Raw: []byte(status)}},
			{Identifier: workv1alpha1.ResourceIdentifier{Ordinal: 1, Kind: "ConfigMap"}},
		}},
	}
}

func TestPackExpand(t *testing.T) {
	packed, err := Pack(work())
	if err != nil {
		t.Fatal(err)
	}
	w := packed.(*workv1alpha1.Work)
	for i, m := range w.Spec.Workload.Manifests {
		if !packedjson.IsPackedRaw(m.Raw) {
			t.Errorf("manifest %d not packed", i)
		}
	}
	if !packedjson.IsPackedRaw(w.Status.ManifestStatuses[0].Status.Raw) || w.Status.ManifestStatuses[1].Status != nil {
		t.Errorf("statuses after packing: %+v", w.Status.ManifestStatuses)
	}

	// Compared without changing the cached copy.
	if same, err := SameManifest(w, 0, []byte(deployment)); !same || err != nil || !packedjson.IsPackedRaw(w.Spec.Workload.Manifests[0].Raw) {
		t.Errorf("SameManifest = %v, %v, or it changed the Work", same, err)
	}

	// Packing twice (an informer's resync hands the same object again)
	// changes nothing.
	again, err := Pack(w.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, again); diff != "" {
		t.Errorf("packed twice (-once +twice):\n%s", diff)
	}

	// A copy from the cache expands to the Work as it came from the API.
	copied := w.DeepCopy()
	if err := Expand(copied); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(work(), copied); diff != "" {
		t.Errorf("expanded (-want +got):\n%s", diff)
	}
	if !packedjson.IsPackedRaw(w.Spec.Workload.Manifests[0].Raw) {
		t.Error("expanding a copy changed the cached Work")
	}

	// A Work that never went through the cache is left alone.
	plain := work()
	if err := Expand(plain); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(work(), plain); diff != "" {
		t.Errorf("expanded an unpacked Work (-want +got):\n%s", diff)
	}
}

func TestPackPassesOtherObjects(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	got, err := Pack(cm)
	if err != nil || got != cm {
		t.Errorf("Pack(ConfigMap) = %v, %v; want it unchanged", got, err)
	}
}

func TestPackedWorkIsSmaller(t *testing.T) {
	// What the transform is for: a realistic manifest (a Deployment with
	// the labels and annotations a Work carries) takes a fraction of its
	// JSON.
	big := strings.Replace(deployment, `"labels":{"app":"nginx"}`,
		`"labels":{"app":"nginx","karmada.io/managed":"true","work.karmada.io/permanent-id":"6b0e0cc5-8b57-4bd8-b3c7-2b1a3c9e4f10"},`+
			`"annotations":{"work.karmada.io/name":"nginx-687f7fb96f","work.karmada.io/namespace":"karmada-es-m1",`+
			`"resourcetemplate.karmada.io/uid":"0c9b2f1e-2f6c-4a8e-9d55-3f1f0f3c2a11","propagationpolicy.karmada.io/name":"nginx"}`, 1)
	w := work()
	w.Spec.Workload.Manifests[0].Raw = []byte(big)
	packed, err := Pack(w)
	if err != nil {
		t.Fatal(err)
	}
	raw := packed.(*workv1alpha1.Work).Spec.Workload.Manifests[0].Raw
	if len(raw) >= len(big)*3/4 {
		t.Errorf("packed manifest %d bytes of %d", len(raw), len(big))
	}
	m, err := packedjson.UnpackRaw(raw)
	if err != nil || !bytes.Equal(m, []byte(big)) {
		t.Errorf("unpacked %s, %v", m, err)
	}
}

func TestExpandCorrupt(t *testing.T) {
	w := work()
	w.Spec.Workload.Manifests[0].Raw = []byte("\x00pj1 not deflate")
	err := Expand(w)
	if err == nil || !strings.Contains(err.Error(), "manifest 0 of Work karmada-es-m1/nginx-687f7fb96f") {
		t.Errorf("Expand of a corrupt manifest: %v", err)
	}
}

func TestSameManifest(t *testing.T) {
	packedWork := func(raw string) *workv1alpha1.Work {
		w := work()
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}}
		packed, err := Pack(w)
		if err != nil {
			t.Fatal(err)
		}
		return packed.(*workv1alpha1.Work)
	}
	plainWork := func(raw string) *workv1alpha1.Work {
		w := work()
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}}
		return w
	}
	tests := []struct {
		name     string
		stored   *workv1alpha1.Work
		rendered string
		want     bool
		wantErr  bool
	}{
		{"same bytes", plainWork(`{"a":1,"b":"x"}`), `{"a":1,"b":"x"}`, true, false},
		{"same bytes, packed", packedWork(`{"a":1,"b":"x"}`), `{"a":1,"b":"x"}`, true, false},
		{"keys reordered", packedWork(`{"b":"x","a":1}`), `{"a":1,"b":"x"}`, true, false},
		{"a value differs", packedWork(`{"a":1,"b":"x"}`), `{"a":2,"b":"x"}`, false, false},
		{"large integers exactly", plainWork(`{"n":9007199254740993}`), `{"n":9007199254740992}`, false, false},
		{"stored not JSON: rewrite", plainWork(`{"a":`), `{"a":1}`, false, false},
		{"stored packed but corrupt: rewrite", plainWork("\x00pj1 garbage"), `{"a":1}`, false, false},
		{"rendered not JSON", plainWork(`{"a":1}`), `{"a":`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SameManifest(tt.stored, 0, []byte(tt.rendered))
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("SameManifest = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestStatusJSON(t *testing.T) {
	packed, err := Pack(work())
	if err != nil {
		t.Fatal(err)
	}
	w := packed.(*workv1alpha1.Work)
	got, err := StatusJSON(&w.Status.ManifestStatuses[0])
	if err != nil || string(got) != status {
		t.Errorf("StatusJSON of a packed status = %s, %v; want %s", got, err, status)
	}
	if !packedjson.IsPackedRaw(w.Status.ManifestStatuses[0].Status.Raw) {
		t.Error("StatusJSON changed the cached Work")
	}
	if got, err := StatusJSON(&w.Status.ManifestStatuses[1]); got != nil || err != nil {
		t.Errorf("StatusJSON of no status = %s, %v; want nil", got, err)
	}
	plain := work()
	got, err = StatusJSON(&plain.Status.ManifestStatuses[0])
	if err != nil || string(got) != status {
		t.Errorf("StatusJSON of an unpacked status = %s, %v", got, err)
	}
	got[0] = 'X'
	if plain.Status.ManifestStatuses[0].Status.Raw[0] == 'X' {
		t.Error("StatusJSON shares the cached bytes")
	}
}
