package clusteraffinity_test

import (
	"context"
	"testing"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clusteraffinity"
	"github.com/flotilla-io/flotilla/internal/affinity"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestFilter(t *testing.T) {
	compile := func(names ...string) *affinity.Matcher {
		m, err := affinity.Compile(&policyv1alpha1.ClusterAffinity{ClusterNames: names})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name  string
		tiers []*affinity.Matcher
		want  string
	}{
		{"no affinity", nil, ""},
		{"nil affinity", []*affinity.Matcher{nil}, ""},
		{"primary matches", []*affinity.Matcher{compile("a")}, ""},
		{"overflow matches", []*affinity.Matcher{compile("b"), compile("a")}, ""},
		{"nothing matches", []*affinity.Matcher{compile("b"), compile("c")}, clusteraffinity.ReasonNotMatched},
	}
	p := clusteraffinity.New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := framework.NewBindingInfo(fixture.Binding("x").Spec())
			b.Tiers = tc.tiers
			r := p.Filter(context.Background(), b, fixture.Cluster("a").Info())
			if r.Reason() != tc.want || r.IsSuccess() != (tc.want == "") {
				t.Errorf("got (%v, %q), want reason %q", r.IsSuccess(), r.Reason(), tc.want)
			}
		})
	}
}
