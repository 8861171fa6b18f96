package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func quota(overall corev1.ResourceList, assignments ...policyv1alpha1.StaticClusterAssignment) *policyv1alpha1.FederatedResourceQuota {
	return &policyv1alpha1.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "apps"},
		Spec:       policyv1alpha1.FederatedResourceQuotaSpec{Overall: overall, StaticAssignments: assignments},
	}
}

func TestValidate(t *testing.T) {
	h := NewValidator(admissiontest.Decoder())
	tests := []struct {
		name string
		obj  *policyv1alpha1.FederatedResourceQuota
		want []string
	}{
		{name: "valid", obj: quota(list("cpu", "4", "memory", "8Gi"),
			policyv1alpha1.StaticClusterAssignment{ClusterName: "member1", Hard: list("cpu", "2")},
			policyv1alpha1.StaticClusterAssignment{ClusterName: "member2", Hard: list("cpu", "2")})},
		{name: "assignments over the overall limit", obj: quota(list("cpu", "3"),
			policyv1alpha1.StaticClusterAssignment{ClusterName: "member1", Hard: list("cpu", "2")},
			policyv1alpha1.StaticClusterAssignment{ClusterName: "member2", Hard: list("cpu", "2")}),
			want: []string{"spec.overall[cpu]"}},
		{name: "assignment without an overall limit", obj: quota(list("cpu", "3"),
			policyv1alpha1.StaticClusterAssignment{ClusterName: "member1", Hard: list("memory", "1Gi")}),
			want: []string{"spec.staticAssignments[0].hard[memory]"}},
		{name: "names and quantities", obj: quota(list("bad name!", "1", "cpu", "-1"),
			policyv1alpha1.StaticClusterAssignment{ClusterName: "Member_1", Hard: list("cpu", "0")},
			policyv1alpha1.StaticClusterAssignment{ClusterName: "Member_1", Hard: list("cpu", "0")}),
			want: []string{"spec.overall[bad name!]", "spec.overall[cpu]", "spec.overall[cpu]", "spec.staticAssignments[0].clusterName",
				"spec.staticAssignments[1].clusterName", "spec.staticAssignments[1].clusterName"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), admissiontest.Want{Denied: tc.want})
		})
	}
}
