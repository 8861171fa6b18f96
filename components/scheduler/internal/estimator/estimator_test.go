package estimator_test

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/estimator"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
)

func TestEstimate(t *testing.T) {
	tests := []struct {
		name    string
		cluster *fixture.ClusterBuilder
		req     *estimator.Requirements
		want    int32
	}{{
		name:    "no summary holds nothing",
		cluster: fixture.Cluster("a"),
		req:     estimator.ForReplica(nil),
		want:    0,
	}, {
		name:    "no pod capacity holds nothing",
		cluster: fixture.Cluster("a").Allocatable("cpu=8"),
		req:     estimator.ForReplica(nil),
		want:    0,
	}, {
		name:    "without requests the free pod count decides",
		cluster: fixture.Cluster("a").Allocatable("pods=110").Allocated("pods=10").Allocating("pods=5"),
		req:     estimator.ForReplica(nil),
		want:    95,
	}, {
		name:    "cpu is the tightest",
		cluster: fixture.Cluster("a").Allocatable("pods=110", "cpu=8", "memory=64Gi").Allocated("cpu=3", "memory=10Gi"),
		req:     estimator.ForReplica(fixture.Binding("x").Request("cpu=500m", "memory=1Gi").Spec().ReplicaRequirements),
		want:    10,
	}, {
		name:    "pods are the tightest",
		cluster: fixture.Cluster("a").Allocatable("pods=4", "cpu=8"),
		req:     estimator.ForReplica(fixture.Binding("x").Request("cpu=100m").Spec().ReplicaRequirements),
		want:    4,
	}, {
		name:    "a resource the cluster does not have",
		cluster: fixture.Cluster("a").Allocatable("pods=110", "cpu=8"),
		req:     estimator.ForReplica(fixture.Binding("x").Request("nvidia.com/gpu=1").Spec().ReplicaRequirements),
		want:    0,
	}, {
		name:    "overcommitted cluster holds nothing",
		cluster: fixture.Cluster("a").Allocatable("pods=110", "cpu=8").Allocated("cpu=9"),
		req:     estimator.ForReplica(fixture.Binding("x").Request("cpu=1").Spec().ReplicaRequirements),
		want:    0,
	}, {
		// Grade 0 nodes have [0,2) cpu free (count 0 per node), grade 1
		// [2,4): 2 replicas of 1 cpu per node, 3 nodes; grade 2 [4,8): 4
		// per node, 1 node. Summary alone would say 20.
		name: "resource models count per node",
		cluster: fixture.Cluster("a").Allocatable("pods=110", "cpu=20", "memory=100Gi").
			Model(0, 5, "cpu=0:2", "memory=0:4Gi").
			Model(1, 3, "cpu=2:4", "memory=4Gi:16Gi").
			Model(2, 1, "cpu=4:8", "memory=16Gi:32Gi"),
		req:  estimator.ForReplica(fixture.Binding("x").Request("cpu=1", "memory=1Gi").Spec().ReplicaRequirements),
		want: 10,
	}, {
		name: "models without the requested resource fall back to the summary",
		cluster: fixture.Cluster("a").Allocatable("pods=110", "cpu=20", "memory=100Gi").
			Model(0, 5, "cpu=0:2").Model(1, 3, "cpu=2:4"),
		req:  estimator.ForReplica(fixture.Binding("x").Request("memory=10Gi").Spec().ReplicaRequirements),
		want: 10,
	}, {
		name:    "component set: resources of all components together",
		cluster: fixture.Cluster("a").Allocatable("pods=110", "cpu=10"),
		req: estimator.ForComponentSet(fixture.Binding("x").
			Component("jobmanager", 1, "cpu=1").Component("taskmanager", 3, "cpu=1").Spec().Components),
		want: 2,
	}, {
		name:    "component set: pods of all components together",
		cluster: fixture.Cluster("a").Allocatable("pods=9", "cpu=100"),
		req: estimator.ForComponentSet(fixture.Binding("x").
			Component("head", 1).Component("worker", 3).Spec().Components),
		want: 2,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := estimator.Estimate(estimator.NewTarget(tc.cluster.Obj()), tc.req)
			if got != tc.want {
				t.Errorf("Estimate = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestGeneralBatch(t *testing.T) {
	targets := []*estimator.Target{
		estimator.NewTarget(fixture.Cluster("a").Pods(3).Obj()),
		estimator.NewTarget(fixture.Cluster("b").Obj()),
		estimator.NewTarget(fixture.Cluster("c").Allocatable("pods=1000000000000").Obj()),
	}
	out := make([]int32, len(targets))
	if err := (estimator.General{}).MaxAvailableReplicas(context.Background(), targets, estimator.ForReplica(&workv1alpha2.ReplicaRequirements{}), out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int32{3, 0, math.MaxInt32}, out); diff != "" {
		t.Errorf("MaxAvailableReplicas (-want +got):\n%s", diff)
	}
}
