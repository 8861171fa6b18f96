package core_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// c builds a candidate: name, current replicas, available room.
func c(name string, current int32, avail int64) core.Candidate {
	return core.Candidate{Cluster: fixture.Cluster(name).Info(), Name: name, Current: current, IsCurrent: current > 0, Avail: avail, Weight: 1}
}

func weighted(cand core.Candidate, w int64) core.Candidate { cand.Weight = w; return cand }

// overflow puts a candidate in the first overflow tier, after the primary.
func overflow(cand core.Candidate) core.Candidate { cand.Tier = 1; return cand }

var T = fixture.T

func TestAssign(t *testing.T) {
	tests := []struct {
		name     string
		strategy core.Strategy
		cands    []core.Candidate
		replicas int32
		fresh    bool
		want     []workv1alpha2.TargetCluster
		wantErr  bool
	}{
		{name: "duplicated gives everyone the full count", strategy: core.Duplicated,
			cands: []core.Candidate{c("b", 0, 0), c("a", 0, 0)}, replicas: 3,
			want: []workv1alpha2.TargetCluster{T("a", 3), T("b", 3)}},
		{name: "non-workload goes everywhere without a count", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 0, 0), c("b", 0, 0)}, replicas: 0,
			want: []workv1alpha2.TargetCluster{{Name: "a"}, {Name: "b"}}},
		{name: "static 2:1", strategy: core.StaticWeighted,
			cands: []core.Candidate{weighted(c("a", 0, 0), 2), weighted(c("b", 0, 0), 1)}, replicas: 3,
			want: []workv1alpha2.TargetCluster{T("a", 2), T("b", 1)}},
		{name: "static: unweighted cluster gets none", strategy: core.StaticWeighted,
			cands: []core.Candidate{weighted(c("a", 0, 0), 1), weighted(c("b", 0, 0), 0)}, replicas: 3,
			want: []workv1alpha2.TargetCluster{T("a", 3)}},
		{name: "static: scale up keeps what is there", strategy: core.StaticWeighted,
			cands: []core.Candidate{c("a", 2, 0), c("b", 1, 0), c("c", 1, 0)}, replicas: 5,
			want: []workv1alpha2.TargetCluster{T("a", 2), T("b", 2), T("c", 1)}},
		{name: "static: fresh rebalance ignores where replicas are", strategy: core.StaticWeighted,
			cands: []core.Candidate{weighted(c("a", 3, 0), 1), weighted(c("b", 0, 0), 2)}, replicas: 3, fresh: true,
			want: []workv1alpha2.TargetCluster{T("a", 1), T("b", 2)}},
		{name: "dynamic by room", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 0, 30), c("b", 0, 10)}, replicas: 8,
			want: []workv1alpha2.TargetCluster{T("a", 6), T("b", 2)}},
		{name: "dynamic: not enough room", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 0, 3), c("b", 0, 2)}, replicas: 8, wantErr: true},
		{name: "dynamic: scale up places the delta by room", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 4, 10), c("b", 4, 30)}, replicas: 12,
			want: []workv1alpha2.TargetCluster{T("a", 5), T("b", 7)}},
		{name: "dynamic: scale down shrinks proportionally", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 6, 0), c("b", 2, 0)}, replicas: 4,
			want: []workv1alpha2.TargetCluster{T("a", 3), T("b", 1)}},
		{name: "dynamic: fresh counts own replicas as room", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 6, 0), c("b", 0, 6)}, replicas: 6, fresh: true,
			want: []workv1alpha2.TargetCluster{T("a", 3), T("b", 3)}},
		{name: "aggregated: fewest clusters, roomiest first", strategy: core.Aggregated,
			cands: []core.Candidate{c("a", 0, 5), c("b", 0, 20), c("c", 0, 8)}, replicas: 10,
			want: []workv1alpha2.TargetCluster{T("b", 10)}},
		{name: "aggregated: two needed", strategy: core.Aggregated,
			cands: []core.Candidate{c("a", 0, 5), c("b", 0, 6), c("c", 0, 8)}, replicas: 10,
			want: []workv1alpha2.TargetCluster{T("b", 4), T("c", 6)}},
		{name: "aggregated: scale up prefers the current cluster", strategy: core.Aggregated,
			cands: []core.Candidate{c("a", 2, 5), c("b", 0, 50)}, replicas: 6,
			want: []workv1alpha2.TargetCluster{T("a", 6)}},
		{name: "overflow takes only what the primary cannot hold", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 0, 4), overflow(c("b", 0, 100))}, replicas: 10,
			want: []workv1alpha2.TargetCluster{T("a", 4), T("b", 6)}},
		{name: "overflow retracts first on scale down", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 4, 0), overflow(c("b", 6, 0))}, replicas: 5,
			want: []workv1alpha2.TargetCluster{T("a", 4), T("b", 1)}},
		{name: "overflow empties before the primary shrinks", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 4, 0), overflow(c("b", 6, 0))}, replicas: 3,
			want: []workv1alpha2.TargetCluster{T("a", 3)}},
		{name: "overflow: scale up fills the primary first", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 4, 2), overflow(c("b", 6, 100))}, replicas: 14,
			want: []workv1alpha2.TargetCluster{T("a", 6), T("b", 8)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := core.Assign(tc.strategy, tc.cands, tc.replicas, tc.fresh)
			if tc.wantErr {
				var u *framework.UnschedulableError
				if !errors.As(err, &u) {
					t.Fatalf("want an UnschedulableError, got %v (%v)", err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssignComponents(t *testing.T) {
	spec := fixture.Binding("flink").Replicas(4).Component("jobmanager", 1).Component("taskmanager", 3).Spec()
	full := []workv1alpha2.ComponentReplicas{{Name: "jobmanager", Replicas: 1}, {Name: "taskmanager", Replicas: 3}}
	tests := []struct {
		name     string
		strategy core.Strategy
		cands    []core.Candidate
		fresh    bool
		want     []workv1alpha2.TargetCluster
		wantErr  bool
	}{
		{name: "duplicated copies every component", strategy: core.Duplicated, cands: []core.Candidate{c("a", 0, 0), c("b", 0, 0)},
			want: []workv1alpha2.TargetCluster{{Name: "a", Replicas: 4, Components: full}, {Name: "b", Replicas: 4, Components: full}}},
		{name: "divided keeps the workload whole where most sets fit", strategy: core.DynamicWeighted,
			cands: []core.Candidate{c("a", 0, 1), c("b", 0, 3)},
			want:  []workv1alpha2.TargetCluster{{Name: "b", Replicas: 4, Components: full}}},
		{name: "divided stays where it runs", strategy: core.Aggregated,
			cands: []core.Candidate{{Cluster: fixture.Cluster("a").Info(), Name: "a", IsCurrent: true, Avail: 0}, c("b", 0, 3)},
			want:  []workv1alpha2.TargetCluster{{Name: "a", Replicas: 4, Components: full}}},
		{name: "no complete set fits", strategy: core.Aggregated, cands: []core.Candidate{c("a", 0, 0)}, wantErr: true},
		{name: "static picks the heaviest weight", strategy: core.StaticWeighted,
			cands: []core.Candidate{weighted(c("a", 0, 0), 1), weighted(c("b", 0, 0), 5)},
			want:  []workv1alpha2.TargetCluster{{Name: "b", Replicas: 4, Components: full}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := core.AssignComponents(tc.strategy, tc.cands, spec, tc.fresh)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStrategyOf(t *testing.T) {
	tests := []struct {
		b    *fixture.BindingBuilder
		want core.Strategy
	}{
		{fixture.Binding("x"), core.Duplicated},
		{fixture.Binding("x").Duplicated(), core.Duplicated},
		{fixture.Binding("x").Weighted(), core.StaticWeighted},
		{fixture.Binding("x").Weighted(fixture.Weight{Cluster: "a", Weight: 1}), core.StaticWeighted},
		{fixture.Binding("x").Dynamic(), core.DynamicWeighted},
		{fixture.Binding("x").Aggregated(), core.Aggregated},
	}
	for _, tc := range tests {
		if got := core.StrategyOf(tc.b.Spec().Placement); got != tc.want {
			t.Errorf("StrategyOf(%+v) = %s, want %s", tc.b.Spec().Placement.ReplicaScheduling, got, tc.want)
		}
	}
}
