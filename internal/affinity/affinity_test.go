package affinity_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/affinity"
)

func fields(key string, op corev1.NodeSelectorOperator, values ...string) *policyv1alpha1.FieldSelector {
	return &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

// clusterOption changes one field of a test Cluster.
type clusterOption func(*clusterv1alpha1.Cluster)

func cluster(name string, opts ...clusterOption) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func env(v string) clusterOption    { return func(c *clusterv1alpha1.Cluster) { c.Labels["env"] = v } }
func region(r string) clusterOption { return func(c *clusterv1alpha1.Cluster) { c.Spec.Region = r } }
func provider(p string) clusterOption {
	return func(c *clusterv1alpha1.Cluster) { c.Spec.Provider = p }
}
func zone(z string) clusterOption     { return func(c *clusterv1alpha1.Cluster) { c.Spec.Zone = z } }
func zones(z ...string) clusterOption { return func(c *clusterv1alpha1.Cluster) { c.Spec.Zones = z } }

func TestMatches(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	many[39] = "member1"
	tests := []struct {
		name     string
		affinity *policyv1alpha1.ClusterAffinity
		cluster  *clusterv1alpha1.Cluster
		want     bool
	}{
		{"nil matches all", nil, cluster("member1"), true},
		{"empty matches all", &policyv1alpha1.ClusterAffinity{}, cluster("member1"), true},
		{"listed name", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}, cluster("member1"), true},
		{"unlisted name", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, cluster("member1"), false},
		{"long name list", &policyv1alpha1.ClusterAffinity{ClusterNames: many}, cluster("member1"), true},
		{"exclude wins over names", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}, ExcludeClusters: []string{"member1"}}, cluster("member1"), false},
		{"label selector", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, cluster("m", env("prod")), true},
		{"label selector mismatch", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, cluster("m", env("dev")), false},
		{"region In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("region", corev1.NodeSelectorOpIn, "eu", "us")}, cluster("m", region("eu")), true},
		{"region In without region", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("region", corev1.NodeSelectorOpIn, "eu")}, cluster("m"), false},
		{"region NotIn", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("region", corev1.NodeSelectorOpNotIn, "eu")}, cluster("m", region("us")), true},
		{"region NotIn without region", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("region", corev1.NodeSelectorOpNotIn, "eu")}, cluster("m"), true},
		{"provider In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("provider", corev1.NodeSelectorOpIn, "aws")}, cluster("m", provider("gcp")), false},
		{"deprecated zone In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("zone", corev1.NodeSelectorOpIn, "z1")}, cluster("m", zone("z1")), true},
		{"all zones In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("zone", corev1.NodeSelectorOpIn, "z1", "z2")}, cluster("m", zones("z1", "z2")), true},
		{"some zones not In", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("zone", corev1.NodeSelectorOpIn, "z1")}, cluster("m", zones("z1", "z2")), false},
		{"zones NotIn touches one", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("zone", corev1.NodeSelectorOpNotIn, "z2")}, cluster("m", zones("z1", "z2")), false},
		{"unknown field never matches", &policyv1alpha1.ClusterAffinity{FieldSelector: fields("color", corev1.NodeSelectorOpIn, "blue")}, cluster("m"), false},
		{"all criteria hold", &policyv1alpha1.ClusterAffinity{
			ClusterNames:  []string{"m"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			FieldSelector: fields("region", corev1.NodeSelectorOpIn, "eu"),
		}, cluster("m", env("prod"), region("eu")), true},
		{"one criterion fails", &policyv1alpha1.ClusterAffinity{
			ClusterNames:  []string{"m"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			FieldSelector: fields("region", corev1.NodeSelectorOpIn, "eu"),
		}, cluster("m", env("prod"), region("us")), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := affinity.Compile(tc.affinity)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Matches(tc.cluster); got != tc.want {
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
