package clustertaintpolicy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

func policy(name string, mutate ...func(*policyv1alpha1.ClusterTaintPolicy)) *policyv1alpha1.ClusterTaintPolicy {
	p := &policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			AddOnConditions:    []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpNotIn, StatusValues: []metav1.ConditionStatus{"True"}}},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{"True"}}},
			Taints:             []policyv1alpha1.Taint{{Key: "example.io/unhealthy", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func TestValidate(t *testing.T) {
	existing := policy("existing", func(p *policyv1alpha1.ClusterTaintPolicy) {
		p.Spec.Taints = []policyv1alpha1.Taint{{Key: "example.io/degraded", Effect: corev1.TaintEffectNoExecute}}
	})
	reader := fake.NewClientBuilder().WithScheme(admissiontest.Scheme()).WithObjects(existing).Build()
	h := NewValidator(admissiontest.Decoder(), reader, true)
	tests := []struct {
		name string
		obj  *policyv1alpha1.ClusterTaintPolicy
		want []string
	}{
		{name: "valid", obj: policy("new")},
		{name: "updating the existing one", obj: existing},
		{
			name: "taint of another policy",
			obj: policy("new", func(p *policyv1alpha1.ClusterTaintPolicy) {
				p.Spec.Taints = append(p.Spec.Taints, policyv1alpha1.Taint{Key: "example.io/degraded", Effect: corev1.TaintEffectNoExecute})
			}),
			want: []string{"spec.taints[1]"},
		},
		{
			name: "duplicate and malformed taints",
			obj: policy("new", func(p *policyv1alpha1.ClusterTaintPolicy) {
				p.Spec.Taints = append(p.Spec.Taints,
					policyv1alpha1.Taint{Key: "example.io/unhealthy", Effect: corev1.TaintEffectNoSchedule},
					policyv1alpha1.Taint{Key: "bad key", Value: "v!", Effect: corev1.TaintEffectPreferNoSchedule})
			}),
			want: []string{"spec.taints[1]", "spec.taints[2].key", "spec.taints[2].value", "spec.taints[2].effect"},
		},
		{
			name: "conditions",
			obj: policy("new", func(p *policyv1alpha1.ClusterTaintPolicy) {
				p.Spec.AddOnConditions[0].Operator = "Exists"
				p.Spec.RemoveOnConditions[0].StatusValues = []metav1.ConditionStatus{"Maybe"}
			}),
			want: []string{"spec.addOnConditions[0].operator", "spec.removeOnConditions[0].statusValues[0]"},
		},
		{
			name: "no conditions at all",
			obj: policy("new", func(p *policyv1alpha1.ClusterTaintPolicy) {
				p.Spec.AddOnConditions, p.Spec.RemoveOnConditions = nil, nil
			}),
			want: []string{"spec.addOnConditions"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), admissiontest.Want{Denied: tc.want})
		})
	}
}

// TestNoExecuteNeedsAllowing: without --allow-no-execute-taint-policy a
// NoExecute taint is refused, naming its effect; NoSchedule ones pass.
func TestNoExecuteNeedsAllowing(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(admissiontest.Scheme()).Build()
	h := NewValidator(admissiontest.Decoder(), reader, false)
	admissiontest.Check(t, h, admissiontest.Create(policy("no-schedule")), admissiontest.Want{})
	noExec := policy("no-execute", func(p *policyv1alpha1.ClusterTaintPolicy) {
		p.Spec.Taints = append(p.Spec.Taints, policyv1alpha1.Taint{Key: "example.io/degraded", Effect: corev1.TaintEffectNoExecute})
	})
	admissiontest.Check(t, h, admissiontest.Create(noExec), admissiontest.Want{Denied: []string{"spec.taints[1].effect"}})
}
