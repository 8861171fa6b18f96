package clustertaintpolicy_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/clustertaintpolicy"
)

func cond(t string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: t, Status: s}
}

func match(t string, op policyv1alpha1.MatchConditionOperator, values ...metav1.ConditionStatus) policyv1alpha1.MatchCondition {
	return policyv1alpha1.MatchCondition{ConditionType: t, Operator: op, StatusValues: values}
}

func TestMatches(t *testing.T) {
	notReady := []metav1.Condition{cond("Ready", metav1.ConditionFalse), cond("NetworkAvailable", metav1.ConditionTrue)}
	tests := []struct {
		name  string
		conds []metav1.Condition
		match []policyv1alpha1.MatchCondition
		want  bool
	}{
		{"no match conditions never match", notReady, nil, false},
		{"In holds", notReady, []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpIn, "False", "Unknown")}, true},
		{"In fails", notReady, []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpIn, "True")}, false},
		{"NotIn holds", notReady, []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpNotIn, "True")}, true},
		{"NotIn fails", notReady, []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpNotIn, "False")}, false},
		{"absent condition never matches NotIn", notReady, []policyv1alpha1.MatchCondition{match("SchedulerDown", policyv1alpha1.MatchConditionOpNotIn, "True")}, false},
		{"absent condition never matches In", nil, []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpIn, "False")}, false},
		{"ANDed, all hold", notReady, []policyv1alpha1.MatchCondition{
			match("Ready", policyv1alpha1.MatchConditionOpNotIn, "True"), match("NetworkAvailable", policyv1alpha1.MatchConditionOpIn, "True")}, true},
		{"ANDed, one fails", notReady, []policyv1alpha1.MatchCondition{
			match("Ready", policyv1alpha1.MatchConditionOpNotIn, "True"), match("NetworkAvailable", policyv1alpha1.MatchConditionOpNotIn, "True")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := clustertaintpolicy.Matches(tc.conds, tc.match); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func policy(name string, created time.Time, targets []string, taints ...policyv1alpha1.Taint) policyv1alpha1.ClusterTaintPolicy {
	p := policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			AddOnConditions:    []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpNotIn, "True")},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpIn, "True")},
			Taints:             taints,
		},
	}
	if targets != nil {
		p.Spec.TargetClusters = &policyv1alpha1.ClusterAffinity{ClusterNames: targets}
	}
	return p
}

func TestTaints(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	t0 := now.Add(-2 * time.Hour)
	noExec := policyv1alpha1.Taint{Key: "not-ready", Effect: corev1.TaintEffectNoExecute}
	noSched := policyv1alpha1.Taint{Key: "not-ready", Value: "x", Effect: corev1.TaintEffectNoSchedule}
	other := corev1.Taint{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}
	cluster := func(ready metav1.ConditionStatus, taints ...corev1.Taint) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
		c.Spec.Taints = taints
		c.Status.Conditions = []metav1.Condition{cond("Ready", ready)}
		return c
	}
	tests := []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		policies []policyv1alpha1.ClusterTaintPolicy
		want     []corev1.Taint
	}{
		{"added when the add conditions hold", cluster("False", other),
			[]policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, noExec, noSched)},
			[]corev1.Taint{other, {Key: "not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: &now}, {Key: "not-ready", Value: "x", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now}}},
		{"a taint already there keeps its time", cluster("False", corev1.Taint{Key: "not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: &earlier}),
			[]policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, noExec)},
			[]corev1.Taint{{Key: "not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: &earlier}}},
		{"removed when the remove conditions hold, others kept", cluster("True", other, corev1.Taint{Key: "not-ready", Effect: corev1.TaintEffectNoExecute}),
			[]policyv1alpha1.ClusterTaintPolicy{policy("p", t0, nil, noExec)},
			[]corev1.Taint{other}},
		{"neither condition set: unchanged", cluster("Unknown", other),
			[]policyv1alpha1.ClusterTaintPolicy{func() policyv1alpha1.ClusterTaintPolicy {
				p := policy("p", t0, nil, noExec)
				p.Spec.AddOnConditions = []policyv1alpha1.MatchCondition{match("Ready", policyv1alpha1.MatchConditionOpIn, "False")}
				return p
			}()},
			[]corev1.Taint{other}},
		{"a policy targeting other clusters does nothing", cluster("False"),
			[]policyv1alpha1.ClusterTaintPolicy{policy("p", t0, []string{"member2"}, noExec)},
			nil},
		{"the newer policy wins a conflict", cluster("False"),
			[]policyv1alpha1.ClusterTaintPolicy{
				// Created later, listed first: still applied last.
				func() policyv1alpha1.ClusterTaintPolicy {
					p := policy("remover", t0.Add(time.Minute), nil, noExec)
					p.Spec.RemoveOnConditions = p.Spec.AddOnConditions
					p.Spec.AddOnConditions = nil
					return p
				}(),
				policy("adder", t0, nil, noExec),
			},
			nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := clustertaintpolicy.Taints(tc.cluster, tc.policies, now)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("taints %v, want %v", got, tc.want)
			}
			for i := range got {
				if !got[i].MatchTaint(&tc.want[i]) || got[i].Value != tc.want[i].Value || !got[i].TimeAdded.Equal(tc.want[i].TimeAdded) {
					t.Errorf("taint %d = %v (added %v), want %v (added %v)", i, got[i], got[i].TimeAdded, tc.want[i], tc.want[i].TimeAdded)
				}
			}
		})
	}
}

func TestTaintsReportsABadPolicyAndAppliesTheOthers(t *testing.T) {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
	c.Status.Conditions = []metav1.Condition{cond("Ready", "False")}
	bad := policy("bad", time.Now(), nil, policyv1alpha1.Taint{Key: "a", Effect: corev1.TaintEffectNoSchedule})
	bad.Spec.TargetClusters = &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}},
	}}
	good := policy("good", time.Now(), nil, policyv1alpha1.Taint{Key: "b", Effect: corev1.TaintEffectNoSchedule})
	got, err := clustertaintpolicy.Taints(c, []policyv1alpha1.ClusterTaintPolicy{bad, good}, metav1.Now())
	if err == nil {
		t.Error("no error for a policy with an invalid targetClusters")
	}
	if len(got) != 1 || got[0].Key != "b" {
		t.Errorf("taints %v; want the good policy's", got)
	}
}
