package affinity_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/affinity"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
)

func fields(key string, op corev1.NodeSelectorOperator, values ...string) *policyv1alpha1.FieldSelector {
	return &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func TestMatches(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	many[39] = "member1"
	tests := []struct {
		name     string
		affinity *policyv1alpha1.ClusterAffinity
		cluster  *fixture.ClusterBuilder
		want     bool
	}{
		{"nil matches all", nil, fixture.Cluster("member1"), true},
		{"empty matches all", &policyv1alpha1.ClusterAffinity{}, fixture.Cluster("member1"), true},
		{"listed name", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}, fixture.Cluster("member1"), true},
		{"unlisted name", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, fixture.Cluster("member1"), false},
		{"long name list", &policyv1alpha1.ClusterAffinity{ClusterNames: many}, fixture.Cluster("member1"), true},
		{"exclude wins over names", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}, ExcludeClusters: []string{"member1"}}, fixture.Cluster("member1"), false},
		{"label selector", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, fixture.Cluster("m").Label("env", "prod"), true},
		{"label selector mismatch", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, fixture.Cluster("m").Label("env", "dev"), false},
		{"region In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("region", corev1.NodeSelectorOpIn, "eu", "us")}, fixture.Cluster("m").Region("eu"), true},
		{"region In without region", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("region", corev1.NodeSelectorOpIn, "eu")}, fixture.Cluster("m"), false},
		{"region NotIn", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("region", corev1.NodeSelectorOpNotIn, "eu")}, fixture.Cluster("m").Region("us"), true},
		{"region NotIn without region", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("region", corev1.NodeSelectorOpNotIn, "eu")}, fixture.Cluster("m"), true},
		{"provider In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("provider", corev1.NodeSelectorOpIn, "aws")}, fixture.Cluster("m").Provider("gcp"), false},
		{"deprecated zone In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("zone", corev1.NodeSelectorOpIn, "z1")}, fixture.Cluster("m").Zone("z1"), true},
		{"all zones In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("zone", corev1.NodeSelectorOpIn, "z1", "z2")}, fixture.Cluster("m").Zones("z1", "z2"), true},
		{"some zones not In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("zone", corev1.NodeSelectorOpIn, "z1")}, fixture.Cluster("m").Zones("z1", "z2"), false},
		{"zones NotIn touches one", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("zone", corev1.NodeSelectorOpNotIn, "z2")}, fixture.Cluster("m").Zones("z1", "z2"), false},
		{"unknown field never matches", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("color", corev1.NodeSelectorOpIn, "blue")}, fixture.Cluster("m"), false},
		{"all criteria hold", &policyv1alpha1.ClusterAffinity{
			ClusterNames:  []string{"m"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			FieldSelector: fields("region", corev1.NodeSelectorOpIn, "eu"),
		}, fixture.Cluster("m").Label("env", "prod").Region("eu"), true},
		{"one criterion fails", &policyv1alpha1.ClusterAffinity{
			ClusterNames:  []string{"m"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			FieldSelector: fields("region", corev1.NodeSelectorOpIn, "eu"),
		}, fixture.Cluster("m").Label("env", "prod").Region("us"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := affinity.Compile(tc.affinity)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Matches(tc.cluster.Obj()); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCompileRejectsBadSelector(t *testing.T) {
	_, err := affinity.Compile(&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}},
	}})
	if err == nil {
		t.Fatal("want an error for an invalid selector")
	}
}
