package workloadaffinity_test

import (
	"context"
	"errors"
	"testing"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/workloadaffinity"
)

// groups answers from a fixed table, keyed by kind, namespace and group:
// the plugin's view of the informer, whose real lookups the scheduler's
// integration tests cover.
type groups map[framework.GroupKind]map[string][]framework.GroupMember

func (g groups) Members(_ context.Context, kind framework.GroupKind, namespace, group string) ([]framework.GroupMember, error) {
	if namespace == "broken" {
		return nil, errors.New("no index")
	}
	return g[kind][namespace+"/"+group], nil
}

func member(name string, clusters ...string) framework.GroupMember {
	return framework.GroupMember{Name: name, Clusters: clusters}
}

func TestFilter(t *testing.T) {
	table := groups{framework.AffinityGroup: {
		"default/lonely": {member("self-deployment")},
		"default/web":    {member("self-deployment"), member("a-deployment", "m1", "m2"), member("b-deployment", "m2", "m3"), member("pending-deployment")},
		"default/one":    {member("a-deployment", "m1")},
		"other/web":      {member("x-deployment", "m3")},
	}}
	tests := []struct {
		name    string
		binding *fixture.BindingBuilder
		cluster string
		want    string
	}{
		{"no groups", fixture.Binding("self"), "m1", ""},
		{"only an anti-affinity group", fixture.Binding("self").AntiAffinityGroup("web"), "m1", ""},
		{"no scheduled peer: every cluster", fixture.Binding("self").AffinityGroup("lonely"), "m1", ""},
		{"targeted by every scheduled peer", fixture.Binding("self").AffinityGroup("web"), "m2", ""},
		{"missing from one peer", fixture.Binding("self").AffinityGroup("web"), "m1", workloadaffinity.Reason},
		{"missing from all peers", fixture.Binding("self").AffinityGroup("web"), "m4", workloadaffinity.Reason},
		{"already on the cluster", fixture.Binding("self").AffinityGroup("web").Scheduled(fixture.T("m1", 1)), "m1", ""},
		{"being on one cluster opens no other", fixture.Binding("self").AffinityGroup("web").Scheduled(fixture.T("m1", 1)), "m3", workloadaffinity.Reason},
		{"its own old placement does not count", fixture.Binding("a").AffinityGroup("one"), "m2", ""},
		{"groups do not span namespaces", fixture.Binding("self").Namespace("other").AffinityGroup("web"), "m3", ""},
		{"other namespace refuses too", fixture.Binding("self").Namespace("other").AffinityGroup("web"), "m1", workloadaffinity.Reason},
	}
	p := workloadaffinity.New(table)
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rb := tc.binding.Obj()
			b := framework.NewBindingInfo(&rb.Spec)
			b.Namespace, b.Name = rb.Namespace, rb.Name
			if r := p.PreFilter(ctx, b); !r.IsSuccess() {
				t.Fatalf("PreFilter: %v", r.AsError())
			}
			r := p.Filter(ctx, b, fixture.Cluster(tc.cluster).Info())
			if r.Reason() != tc.want || r.IsSuccess() != (tc.want == "") {
				t.Errorf("got (%v, %q), want reason %q", r.IsSuccess(), r.Reason(), tc.want)
			}
		})
	}
}

func TestClusterResourceBindingsHaveNoGroups(t *testing.T) {
	p := workloadaffinity.New(groups{framework.AffinityGroup: {"/web": {member("a", "m1")}}})
	spec := fixture.Binding("self").AffinityGroup("web").Spec()
	b := framework.NewBindingInfo(spec)
	b.Name = "self"
	if r := p.PreFilter(context.Background(), b); !r.IsSuccess() {
		t.Fatal(r.AsError())
	}
	if r := p.Filter(context.Background(), b, fixture.Cluster("m2").Info()); !r.IsSuccess() {
		t.Errorf("a cluster-scoped binding was filtered: %q", r.Reason())
	}
}

func TestLookupFailureIsAnError(t *testing.T) {
	p := workloadaffinity.New(groups{})
	rb := fixture.Binding("self").Namespace("broken").AffinityGroup("web").Obj()
	b := framework.NewBindingInfo(&rb.Spec)
	b.Namespace, b.Name = rb.Namespace, rb.Name
	if r := p.PreFilter(context.Background(), b); r.Code() != framework.Error {
		t.Errorf("got %v, want an error", r.Code())
	}
}
