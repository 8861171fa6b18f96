package binding

import (
	"net/http"
	"testing"

	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
	"github.com/flotilla-io/flotilla/internal/federatedquota"
)

func binding(mutate ...func(*workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: "apps",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:            workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "nginx"},
			Replicas:            4,
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
		},
	}
	for _, m := range mutate {
		m(rb)
	}
	return rb
}

func TestDefault(t *testing.T) {
	h := NewResourceBindingDefaulter(admissiontest.Decoder())
	admissiontest.Check(t, h, admissiontest.Create(binding()), admissiontest.Want{})
	admissiontest.Check(t, h, admissiontest.Create(binding(func(rb *workv1alpha2.ResourceBinding) { rb.Labels = nil })),
		admissiontest.Want{Patch: []jsonpatch.Operation{{Operation: "add", Path: "/metadata/labels"}}, IgnorePatchValues: []string{"/metadata/labels"}})
	admissiontest.Check(t, h, admissiontest.Update(binding(func(rb *workv1alpha2.ResourceBinding) { rb.Labels = map[string]string{"a": "b"} }), binding()),
		admissiontest.Want{Patch: []jsonpatch.Operation{{Operation: "add", Path: "/metadata/labels/resourcebinding.karmada.io~1permanent-id", Value: "id-1"}}})

	ch := NewClusterResourceBindingDefaulter(admissiontest.Decoder())
	crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "system.foo-clusterrole"}}
	admissiontest.Check(t, ch, admissiontest.Create(crb),
		admissiontest.Want{Patch: []jsonpatch.Operation{{Operation: "add", Path: "/metadata/labels"}}, IgnorePatchValues: []string{"/metadata/labels"}})
}

func scheduled(replicas ...int32) func(*workv1alpha2.ResourceBinding) {
	return func(rb *workv1alpha2.ResourceBinding) {
		rb.Spec.Clusters = nil
		for i, r := range replicas {
			rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: []string{"member1", "member2", "member3"}[i], Replicas: r})
		}
	}
}

func TestQuota(t *testing.T) {
	quota := &policyv1alpha1.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "apps"},
		Spec:       policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}},
		Status:     policyv1alpha1.FederatedResourceQuotaStatus{OverallUsed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	}
	reader := fake.NewClientBuilder().WithScheme(admissiontest.Scheme()).WithObjects(quota).Build()
	h := NewQuotaValidator(admissiontest.Decoder(), reader, true)
	tests := []struct {
		name     string
		obj, old *workv1alpha2.ResourceBinding
		want     []string
	}{
		{name: "unscheduled", obj: binding()},
		{name: "within the quota", obj: binding(scheduled(2, 2))},
		{name: "over the quota", obj: binding(scheduled(3, 2)), want: []string{"spec.clusters"}},
		{name: "scaling up over the quota", obj: binding(scheduled(5, 4)), old: binding(scheduled(2, 2)), want: []string{"spec.clusters"}},
		{name: "scaling down is always allowed", obj: binding(scheduled(3, 2)), old: binding(scheduled(4, 4))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admissiontest.Create(tc.obj)
			if tc.old != nil {
				req = admissiontest.Update(tc.obj, tc.old)
			}
			resp := admissiontest.Check(t, h, req, admissiontest.Want{Denied: tc.want})
			// Karmada's refusal, which the scheduler recognises.
			if tc.want != nil && (resp.Result.Code != http.StatusForbidden || resp.Result.Reason != federatedquota.ExceededReason) {
				t.Errorf("refused with %d %q, want 403 %q", resp.Result.Code, resp.Result.Reason, federatedquota.ExceededReason)
			}
		})
	}
	off := NewQuotaValidator(admissiontest.Decoder(), reader, false)
	admissiontest.Check(t, off, admissiontest.Create(binding(scheduled(3, 3, 3))), admissiontest.Want{})
}
