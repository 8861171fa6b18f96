package overrides

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestClusterMatches(t *testing.T) {
	const (
		in    = corev1.NodeSelectorOpIn
		notIn = corev1.NodeSelectorOpNotIn
	)
	fields := func(e ...corev1.NodeSelectorRequirement) *policyv1alpha1.ClusterAffinity {
		return &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: e}}
	}
	labelled := func(sel metav1.LabelSelector) *policyv1alpha1.ClusterAffinity {
		return &policyv1alpha1.ClusterAffinity{LabelSelector: &sel}
	}
	aws := cluster("aws-1", clusterLabels("env", "prod", "tier", "gold"), located("aws", "eu-west-1", "eu-west-1a", "eu-west-1b"))
	bare := cluster("bare")
	legacyZone := cluster("legacy", located("gcp", "us-east1"))
	legacyZone.Spec.Zone = "us-east1-b"

	tests := []struct {
		name     string
		affinity *policyv1alpha1.ClusterAffinity
		cluster  *clusterv1alpha1.Cluster
		want     bool
	}{
		{"nil targets every cluster", nil, bare, true},
		{"empty affinity targets every cluster", &policyv1alpha1.ClusterAffinity{}, bare, true},
		{"listed name", names("bare", "other"), bare, true},
		{"unlisted name", names("other"), bare, false},
		{"exclude", &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"bare"}}, bare, false},
		{"exclude wins over clusterNames", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"bare"}, ExcludeClusters: []string{"bare"}}, bare, false},
		{"exclude of another cluster", &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"x"}}, bare, true},
		{"matchLabels", labelled(metav1.LabelSelector{MatchLabels: pairs("env", "prod")}), aws, true},
		{"matchLabels mismatch", labelled(metav1.LabelSelector{MatchLabels: pairs("env", "dev")}), aws, false},
		{"label In", labelled(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold", "silver"}}}}), aws, true},
		{"label NotIn holds without the label", labelled(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"gold"}}}}), bare, true},
		{"label Exists", labelled(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpExists}}}), aws, true},
		{"label DoesNotExist", labelled(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpDoesNotExist}}}), aws, false},
		{"malformed expression matches nothing", labelled(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn}}}), aws, false},
		{"empty label selector matches all", labelled(metav1.LabelSelector{}), bare, true},
		{"provider In", fields(fieldIs("provider", in, "aws", "gcp")), aws, true},
		{"provider NotIn", fields(fieldIs("provider", notIn, "aws")), aws, false},
		{"region In mismatch", fields(fieldIs("region", in, "us-east1")), aws, false},
		{"region In without a region", fields(fieldIs("region", in, "us-east1")), bare, false},
		{"region NotIn without a region", fields(fieldIs("region", notIn, "us-east1")), bare, true},
		{"zone In needs every zone listed", fields(fieldIs("zone", in, "eu-west-1a")), aws, false},
		{"zone In with every zone listed", fields(fieldIs("zone", in, "eu-west-1a", "eu-west-1b", "eu-west-1c")), aws, true},
		{"zone NotIn needs no zone listed", fields(fieldIs("zone", notIn, "eu-west-1b")), aws, false},
		{"zone NotIn", fields(fieldIs("zone", notIn, "us-east1-b")), aws, true},
		{"zone In without zones", fields(fieldIs("zone", in, "a")), bare, false},
		{"zone from the deprecated spec.zone", fields(fieldIs("zone", in, "us-east1-b")), legacyZone, true},
		{"unknown field key matches nothing", fields(fieldIs("country", in, "ie")), aws, false},
		{"unsupported operator matches nothing", fields(fieldIs("provider", corev1.NodeSelectorOpExists)), aws, false},
		{"expressions are ANDed", fields(fieldIs("provider", in, "aws"), fieldIs("region", in, "us-east1")), aws, false},
		{"every criterion must hold", &policyv1alpha1.ClusterAffinity{
			ClusterNames:  []string{"aws-1"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: pairs("env", "prod")},
			FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{fieldIs("provider", in, "gcp")}},
		}, aws, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clusterMatches(tt.affinity, tt.cluster); got != tt.want {
				t.Errorf("clusterMatches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelectPrecision(t *testing.T) {
	obj := describe(deployment(t, withLabel("team", "a")))
	other := func(mod func(*policyv1alpha1.ResourceSelector)) policyv1alpha1.ResourceSelector {
		rs := deployments()
		mod(&rs)
		return rs
	}
	labels := func(kv ...string) *metav1.LabelSelector { return &metav1.LabelSelector{MatchLabels: pairs(kv...)} }
	tests := []struct {
		name      string
		selectors []policyv1alpha1.ResourceSelector
		want      precision
		selected  bool
	}{
		{"no selectors select everything, least precisely", nil, noMatch, true},
		{"kind", []policyv1alpha1.ResourceSelector{deployments()}, matchAll, true},
		{"labels", []policyv1alpha1.ResourceSelector{deploymentsLabelled("team", "a")}, matchLabels, true},
		{"name", []policyv1alpha1.ResourceSelector{deploymentNamed("web")}, matchName, true},
		{"the best selector counts", []policyv1alpha1.ResourceSelector{deployments(), deploymentNamed("web"), deploymentsLabelled("team", "a")}, matchName, true},
		{"a name ignores the labelSelector", []policyv1alpha1.ResourceSelector{other(func(rs *policyv1alpha1.ResourceSelector) {
			rs.Name, rs.LabelSelector = "web", labels("team", "b")
		})}, matchName, true},
		{"other name", []policyv1alpha1.ResourceSelector{deploymentNamed("api")}, noMatch, false},
		{"other labels", []policyv1alpha1.ResourceSelector{deploymentsLabelled("team", "b")}, noMatch, false},
		{"other apiVersion", []policyv1alpha1.ResourceSelector{other(func(rs *policyv1alpha1.ResourceSelector) { rs.APIVersion = "apps/v1beta1" })}, noMatch, false},
		{"other kind", []policyv1alpha1.ResourceSelector{other(func(rs *policyv1alpha1.ResourceSelector) { rs.Kind = "StatefulSet" })}, noMatch, false},
		{"same namespace", []policyv1alpha1.ResourceSelector{other(func(rs *policyv1alpha1.ResourceSelector) { rs.Namespace = "default" })}, matchAll, true},
		{"other namespace", []policyv1alpha1.ResourceSelector{other(func(rs *policyv1alpha1.ResourceSelector) { rs.Namespace = "prod" })}, noMatch, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, selected := selectPrecision(&obj, tt.selectors)
			if got != tt.want || selected != tt.selected {
				t.Errorf("selectPrecision = %v, %v; want %v, %v", got, selected, tt.want, tt.selected)
			}
		})
	}
}
