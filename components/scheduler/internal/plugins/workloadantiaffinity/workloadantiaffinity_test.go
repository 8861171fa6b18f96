package workloadantiaffinity_test

import (
	"context"
	"errors"
	"testing"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/workloadantiaffinity"
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
	table := groups{
		framework.AntiAffinityGroup: {
			"default/ha":    {member("self-deployment", "m9"), member("a-deployment", "m1"), member("b-deployment", "m2", "m3"), member("pending-deployment")},
			"default/alone": {member("self-deployment", "m1")},
			"other/ha":      {member("x-deployment", "m4")},
		},
		framework.AffinityGroup: {"default/ha": {member("a-deployment", "m4")}},
	}
	tests := []struct {
		name    string
		binding *fixture.BindingBuilder
		cluster string
		want    string
	}{
		{"no groups", fixture.Binding("self"), "m1", ""},
		{"only an affinity group", fixture.Binding("self").AffinityGroup("ha"), "m1", ""},
		{"a peer is there", fixture.Binding("self").AntiAffinityGroup("ha"), "m1", workloadantiaffinity.Reason},
		{"a peer on several clusters", fixture.Binding("self").AntiAffinityGroup("ha"), "m3", workloadantiaffinity.Reason},
		{"no peer there", fixture.Binding("self").AntiAffinityGroup("ha"), "m4", ""},
		{"its own placement does not count", fixture.Binding("self").AntiAffinityGroup("ha"), "m9", ""},
		{"alone in its group", fixture.Binding("self").AntiAffinityGroup("alone"), "m2", ""},
		{"already on the cluster", fixture.Binding("self").AntiAffinityGroup("ha").Scheduled(fixture.T("m1", 1)), "m1", ""},
		{"groups do not span namespaces", fixture.Binding("self").Namespace("other").AntiAffinityGroup("ha"), "m1", ""},
		{"other namespace refuses its own", fixture.Binding("self").Namespace("other").AntiAffinityGroup("ha"), "m4", workloadantiaffinity.Reason},
	}
	p := workloadantiaffinity.New(table)
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

func TestLookupFailureIsAnError(t *testing.T) {
	p := workloadantiaffinity.New(groups{})
	rb := fixture.Binding("self").Namespace("broken").AntiAffinityGroup("ha").Obj()
	b := framework.NewBindingInfo(&rb.Spec)
	b.Namespace, b.Name = rb.Namespace, rb.Name
	if r := p.PreFilter(context.Background(), b); r.Code() != framework.Error {
		t.Errorf("got %v, want an error", r.Code())
	}
}
