package plugins_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins"
)

// The first failing filter names the reason, in Karmada's order.
func TestDefaultFrameworkOrder(t *testing.T) {
	fw := plugins.NewDefaultFramework()
	b := framework.NewBindingInfo(fixture.Binding("x").Resource("batch/v1", "Job").Spec())
	c := fixture.Cluster("a").Taint("t", "", corev1.TaintEffectNoSchedule).Info()
	if r := fw.RunFilterPlugins(context.Background(), b, c); r.Reason() != "did not have the API resource" {
		t.Errorf("first reason %q", r.Reason())
	}
}

var allFilters = []string{"APIEnablement", "TaintToleration", "ClusterAffinity", "SpreadConstraint", "ClusterEviction", "WorkloadAffinity", "WorkloadAntiAffinity"}

func TestParseSelection(t *testing.T) {
	tests := []struct {
		name    string
		list    []string
		filters []string
		scores  []string
		err     string
	}{
		{"default", []string{"*"}, allFilters, []string{"ClusterLocality"}, ""},
		{"all but one", []string{"*", "-TaintToleration"},
			[]string{"APIEnablement", "ClusterAffinity", "SpreadConstraint", "ClusterEviction", "WorkloadAffinity", "WorkloadAntiAffinity"}, []string{"ClusterLocality"}, ""},
		{"the disable may come first", []string{"-ClusterLocality", "*"}, allFilters, nil, ""},
		{"only the named, in the in-tree order", []string{"WorkloadAntiAffinity", "APIEnablement"}, []string{"APIEnablement", "WorkloadAntiAffinity"}, nil, ""},
		{"a disable wins over an enable", []string{"TaintToleration", "-TaintToleration"}, nil, nil, ""},
		{"spaces and empty entries", []string{" * ", "", " -WorkloadAffinity"},
			[]string{"APIEnablement", "TaintToleration", "ClusterAffinity", "SpreadConstraint", "ClusterEviction", "WorkloadAntiAffinity"}, []string{"ClusterLocality"}, ""},
		{"nothing", nil, nil, nil, ""},
		{"unknown", []string{"*", "Foo"}, nil, nil, `unknown plugin "Foo"; in-tree plugins: APIEnablement, TaintToleration, ClusterAffinity, SpreadConstraint, ClusterEviction, WorkloadAffinity, WorkloadAntiAffinity, ClusterLocality`},
		{"unknown disabled", []string{"*", "-Foo"}, nil, nil, `unknown plugin "Foo"; in-tree plugins: APIEnablement, TaintToleration, ClusterAffinity, SpreadConstraint, ClusterEviction, WorkloadAffinity, WorkloadAntiAffinity, ClusterLocality`},
		{"names are case-sensitive", []string{"tainttoleration"}, nil, nil, `unknown plugin "tainttoleration"; in-tree plugins: APIEnablement, TaintToleration, ClusterAffinity, SpreadConstraint, ClusterEviction, WorkloadAffinity, WorkloadAntiAffinity, ClusterLocality`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := plugins.ParseSelection(tc.list)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fw := plugins.NewFramework(sel, plugins.Deps{Groups: noGroups{}})
			if diff := cmp.Diff(tc.filters, fw.FilterNames(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("filters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.scores, fw.ScoreNames(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// The zero Selection is '*'; the workload group plugins need a group
// lookup and are left out without one.
func TestZeroSelection(t *testing.T) {
	var sel plugins.Selection
	if sel.String() != "*" {
		t.Errorf("String %q", sel.String())
	}
	if got := plugins.NewFramework(sel, plugins.Deps{Groups: noGroups{}}).FilterNames(); !cmp.Equal(got, allFilters) {
		t.Errorf("filters %v", got)
	}
	if got := plugins.NewDefaultFramework().FilterNames(); !cmp.Equal(got, allFilters[:5]) {
		t.Errorf("without groups: %v", got)
	}
}

type noGroups struct{}

func (noGroups) Members(context.Context, framework.GroupKind, string, string) ([]framework.GroupMember, error) {
	return nil, nil
}

// tableGroups answers from a fixed table of namespace/group to members.
type tableGroups map[string][]framework.GroupMember

func (g tableGroups) Members(_ context.Context, _ framework.GroupKind, namespace, group string) ([]framework.GroupMember, error) {
	if group == "broken" {
		return nil, errors.New("index missing")
	}
	return g[namespace+"/"+group], nil
}

// The affinity filters' refusals end as the other filters' do: a
// FitError (condition reason NoClusterFit) whose message counts them, and
// a lookup failure is a SchedulerError.
func TestWorkloadGroupsInTheAlgorithm(t *testing.T) {
	snap := fixture.Snapshot(fixture.Cluster("m1"), fixture.Cluster("m2"), fixture.Cluster("m3").Taint("t", "", corev1.TaintEffectNoSchedule))
	groups := tableGroups{
		"default/full": {{Name: "a-deployment", Clusters: []string{"m1"}}, {Name: "b-deployment", Clusters: []string{"m2"}}},
		"default/half": {{Name: "a-deployment", Clusters: []string{"m1"}}},
	}
	alg := core.NewAlgorithm(plugins.NewFramework(plugins.Selection{}, plugins.Deps{Groups: groups}))
	one := policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}
	tests := []struct {
		name    string
		binding *fixture.BindingBuilder
		want    []workv1alpha2.TargetCluster
		err     string
	}{
		{"anti-affinity: the free cluster", fixture.Binding("c").AntiAffinityGroup("half").Duplicated().Spread(one), []workv1alpha2.TargetCluster{{Name: "m2"}}, ""},
		{"anti-affinity: none left", fixture.Binding("c").AntiAffinityGroup("full").Duplicated(),
			nil, "0/3 clusters are available: 1 cluster(s) had untolerated taint {t}, 2 cluster(s) already hosted a workload of the same anti-affinity group."},
		{"affinity: where the peers are", fixture.Binding("c").AffinityGroup("half").Duplicated(), []workv1alpha2.TargetCluster{{Name: "m1"}}, ""},
		{"affinity: peers apart", fixture.Binding("c").AffinityGroup("full").Duplicated(),
			nil, "0/3 clusters are available: 1 cluster(s) had untolerated taint {t}, 2 cluster(s) did not host every workload of the same affinity group."},
		{"lookup failure", fixture.Binding("c").AffinityGroup("broken"), nil, "prefilter plugin WorkloadAffinity: finding the bindings of affinity group \"broken\": index missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rb := tc.binding.Obj()
			d, err := alg.Schedule(context.Background(), snap, core.Input{Spec: &rb.Spec, Namespace: rb.Namespace, Name: rb.Name})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				var fit *framework.FitError
				if wantFit := tc.name != "lookup failure"; errors.As(err, &fit) != wantFit || core.IsUnschedulable(err) != wantFit {
					t.Errorf("FitError %v, want %v", errors.As(err, &fit), wantFit)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, d.Clusters); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
