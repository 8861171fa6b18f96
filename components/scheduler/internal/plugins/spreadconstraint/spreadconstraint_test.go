package spreadconstraint_test

import (
	"context"
	"testing"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/spreadconstraint"
)

func TestFilter(t *testing.T) {
	by := func(f policyv1alpha1.SpreadFieldValue) policyv1alpha1.SpreadConstraint {
		return policyv1alpha1.SpreadConstraint{SpreadByField: f, MinGroups: 1}
	}
	tests := []struct {
		name    string
		spread  []policyv1alpha1.SpreadConstraint
		cluster *fixture.ClusterBuilder
		want    string
	}{
		{"no constraints", nil, fixture.Cluster("a"), ""},
		{"by cluster always passes", []policyv1alpha1.SpreadConstraint{by(policyv1alpha1.SpreadByFieldCluster)}, fixture.Cluster("a"), ""},
		{"region present", []policyv1alpha1.SpreadConstraint{by(policyv1alpha1.SpreadByFieldRegion)}, fixture.Cluster("a").Region("eu"), ""},
		{"region missing", []policyv1alpha1.SpreadConstraint{by(policyv1alpha1.SpreadByFieldRegion)}, fixture.Cluster("a"), spreadconstraint.ReasonNoRegion},
		{"provider missing", []policyv1alpha1.SpreadConstraint{by(policyv1alpha1.SpreadByFieldProvider)}, fixture.Cluster("a").Region("eu"), spreadconstraint.ReasonNoProvider},
		{"deprecated zone counts", []policyv1alpha1.SpreadConstraint{by(policyv1alpha1.SpreadByFieldZone)}, fixture.Cluster("a").Zone("z"), ""},
		{"zones missing", []policyv1alpha1.SpreadConstraint{by(policyv1alpha1.SpreadByFieldZone)}, fixture.Cluster("a"), spreadconstraint.ReasonNoZones},
		{"label present", []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "rack"}}, fixture.Cluster("a").Label("rack", "r1"), ""},
		{"label missing", []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "rack"}}, fixture.Cluster("a"), "did not have label rack"},
	}
	p := spreadconstraint.New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := fixture.Binding("x")
			for _, sc := range tc.spread {
				b.Spread(sc)
			}
			r := p.Filter(context.Background(), framework.NewBindingInfo(b.Spec()), tc.cluster.Info())
			if r.Reason() != tc.want || r.IsSuccess() != (tc.want == "") {
				t.Errorf("got (%v, %q), want reason %q", r.IsSuccess(), r.Reason(), tc.want)
			}
		})
	}
}
