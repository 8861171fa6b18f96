package work

import (
	"testing"

	"gomodules.xyz/jsonpatch/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

const tied = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"apps",` +
	`"labels":{"work.karmada.io/permanent-id":"id-1"},` +
	`"annotations":{"work.karmada.io/name":"cfg-5f85bf9765","work.karmada.io/namespace":"karmada-es-member1"}}}`

func work(labels map[string]string, manifests ...string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "cfg-5f85bf9765", Namespace: "karmada-es-member1", Labels: labels}}
	for _, m := range manifests {
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(m)}})
	}
	return w
}

func TestDefault(t *testing.T) {
	h := NewDefaulter(admissiontest.Decoder())
	id := map[string]string{workv1alpha1.WorkPermanentIDLabel: "id-1"}
	tests := []struct {
		name     string
		obj, old *workv1alpha1.Work
		want     admissiontest.Want
	}{
		{name: "written by the binding controller", obj: work(id, tied)},
		{
			name: "manifest without the Work's marks",
			obj:  work(id, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"apps"}}`),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{
				{Operation: "add", Path: "/spec/workload/manifests/0/metadata/labels", Value: admissiontest.JSON(`{"work.karmada.io/permanent-id":"id-1"}`)},
				{Operation: "add", Path: "/spec/workload/manifests/0/metadata/annotations", Value: admissiontest.JSON(
					`{"work.karmada.io/name":"cfg-5f85bf9765","work.karmada.io/namespace":"karmada-es-member1"}`)},
			}},
		},
		{
			name: "update keeps the Work's id",
			obj:  work(nil, tied),
			old:  work(id, tied),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{{Operation: "add", Path: "/metadata/labels", Value: admissiontest.JSON(`{"work.karmada.io/permanent-id":"id-1"}`)}}},
		},
		{
			name: "new Work gets a new id, in its manifests too",
			obj:  work(nil, tied),
			want: admissiontest.Want{
				Patch: []jsonpatch.Operation{
					{Operation: "add", Path: "/metadata/labels"},
					{Operation: "replace", Path: "/spec/workload/manifests/0/metadata/labels/work.karmada.io~1permanent-id"},
				},
				IgnorePatchValues: []string{"/metadata/labels", "/spec/workload/manifests/0/metadata/labels/work.karmada.io~1permanent-id"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admissiontest.Create(tc.obj)
			if tc.old != nil {
				req = admissiontest.Update(tc.obj, tc.old)
			}
			admissiontest.Check(t, h, req, tc.want)
		})
	}
	bad := work(id, `["not an object"]`)
	if resp := h.Handle(t.Context(), admissiontest.Create(bad)); resp.Allowed {
		t.Error("a Work with a broken manifest is allowed")
	}
}
