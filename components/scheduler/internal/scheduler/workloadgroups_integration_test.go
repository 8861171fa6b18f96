package scheduler_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/workloadantiaffinity"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/queue"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/scheduler"
)

func createNamespace(tb testing.TB, prefix string) string {
	tb.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	if err := apiClient.Create(context.Background(), ns); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = apiClient.Delete(context.Background(), ns) })
	return ns.Name
}

// groupOptions never retry an unschedulable binding on a timer, so that
// only the scheduler's reaction to its group can schedule it.
var groupOptions = scheduler.Options{Queue: queue.Options{
	InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, UnschedulableTimeout: time.Hour,
}}

// Bindings of one affinity group, each preferring a cluster of its own
// (its first clusterAffinities term) and accepting any as a second choice,
// all end on one cluster: whichever the first decision took. They exist
// before the scheduler starts, so its workers take them all at once; two
// workers deciding for the group side by side, blind to each other, would
// each take their own cluster.
func TestIntegrationWorkloadAffinityGroupShareACluster(t *testing.T) {
	needAPIServer(t)
	ns := createNamespace(t, "wa-affinity-")
	clusters := []string{"wa-m1", "wa-m2", "wa-m3"}
	for _, c := range clusters {
		createCluster(t, fixture.Cluster(c))
	}
	const n = 12
	bindings := make([]*workv1alpha2.ResourceBinding, 0, n)
	for i := range n {
		rb := fixture.Binding(fmt.Sprintf("shop-%d", i)).Namespace(ns).SchedulerName("it-affinity").AffinityGroup("shop").Duplicated().
			Terms(
				policyv1alpha1.ClusterAffinityTerm{AffinityName: "own", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{clusters[i%len(clusters)]}}},
				policyv1alpha1.ClusterAffinityTerm{AffinityName: "any", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: clusters}},
			).Obj()
		createBinding(t, rb)
		bindings = append(bindings, rb)
	}
	// Another group and another namespace are not peers.
	other := fixture.Binding("other").Namespace(ns).SchedulerName("it-affinity").AffinityGroup("elsewhere").Duplicated().ClusterNames("wa-m2").Obj()
	createBinding(t, other)
	startScheduler(t, "it-affinity", groupOptions)

	var where string
	for _, rb := range bindings {
		got := waitScheduled(t, rb)
		if len(got.Spec.Clusters) != 1 {
			t.Fatalf("%s on %v, want one cluster", rb.Name, got.Spec.Clusters)
		}
		if where == "" {
			where = got.Spec.Clusters[0].Name
		}
		if got.Spec.Clusters[0].Name != where {
			t.Errorf("%s on %s, its group on %s", rb.Name, got.Spec.Clusters[0].Name, where)
		}
	}
	waitClusters(t, other, []workv1alpha2.TargetCluster{{Name: "wa-m2"}})
}

// An anti-affinity group spreads over distinct clusters, however many
// workers decide at once; the one too many finds no cluster (NoClusterFit,
// the reason counted in the message) and is scheduled as soon as a peer is
// deleted, without waiting for a timer.
func TestIntegrationWorkloadAntiAffinityGroupSpreads(t *testing.T) {
	needAPIServer(t)
	ns := createNamespace(t, "wa-anti-")
	clusters := []string{"wa-a1", "wa-a2", "wa-a3"}
	for _, c := range clusters {
		createCluster(t, fixture.Cluster(c))
	}
	one := policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}
	bindings := make([]*workv1alpha2.ResourceBinding, 0, len(clusters)+1)
	for i := range len(clusters) + 1 {
		rb := fixture.Binding(fmt.Sprintf("ha-%d", i)).Namespace(ns).SchedulerName("it-anti").AntiAffinityGroup("ha").
			Duplicated().Spread(one).ClusterNames(clusters...).Obj()
		createBinding(t, rb)
		bindings = append(bindings, rb)
	}
	startScheduler(t, "it-anti", groupOptions)

	var left *workv1alpha2.ResourceBinding
	holder := map[string]*workv1alpha2.ResourceBinding{}
	eventually(t, "three bindings on distinct clusters and one unschedulable", func() (bool, string) {
		clear(holder)
		left = nil
		for _, rb := range bindings {
			got := getBinding(t, rb.Namespace, rb.Name)
			cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.Scheduled)
			switch {
			case cond == nil:
				return false, rb.Name + " not decided"
			case cond.Status == metav1.ConditionFalse:
				if left != nil {
					return false, fmt.Sprintf("%s and %s both unschedulable", left.Name, got.Name)
				}
				left = got
			case len(got.Spec.Clusters) != 1:
				return false, fmt.Sprintf("%s on %v", got.Name, got.Spec.Clusters)
			default:
				c := got.Spec.Clusters[0].Name
				if prev, ok := holder[c]; ok {
					t.Fatalf("%s and %s of one anti-affinity group both on %s", prev.Name, got.Name, c)
				}
				holder[c] = got
			}
		}
		return len(holder) == len(clusters) && left != nil, fmt.Sprintf("on %d clusters", len(holder))
	})
	cond := meta.FindStatusCondition(left.Status.Conditions, workv1alpha2.Scheduled)
	wantMsg := "0/3 clusters are available: 3 cluster(s) " + workloadantiaffinity.Reason + "."
	if cond.Reason != workv1alpha2.BindingReasonNoClusterFit || cond.Message != wantMsg {
		t.Errorf("condition %s %q, want %s %q", cond.Reason, cond.Message, workv1alpha2.BindingReasonNoClusterFit, wantMsg)
	}
	if len(left.Spec.Clusters) != 0 {
		t.Errorf("the unschedulable binding is on %v", left.Spec.Clusters)
	}

	freed := slices.Sorted(maps.Keys(holder))[1]
	if err := apiClient.Delete(context.Background(), holder[freed]); err != nil {
		t.Fatal(err)
	}
	waitClusters(t, left, []workv1alpha2.TargetCluster{{Name: freed}})
}

// waitScheduled waits until the binding is scheduled for its generation.
func waitScheduled(tb testing.TB, rb *workv1alpha2.ResourceBinding) *workv1alpha2.ResourceBinding {
	tb.Helper()
	var got *workv1alpha2.ResourceBinding
	eventually(tb, rb.Name+" scheduled", func() (bool, string) {
		got = getBinding(tb, rb.Namespace, rb.Name)
		cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.Scheduled)
		if cond == nil || cond.Status != metav1.ConditionTrue || got.Status.SchedulerObservedGeneration != got.Generation {
			return false, fmt.Sprintf("condition %+v", cond)
		}
		return true, ""
	})
	return got
}

// A binding that no cluster fits because its affinity group is elsewhere
// is scheduled as soon as its peer moves to a cluster it accepts, without
// waiting for a timer.
func TestIntegrationWorkloadAffinityFollowsAMovingPeer(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := createNamespace(t, "wa-follow-")
	createCluster(t, fixture.Cluster("wf-m1"))
	createCluster(t, fixture.Cluster("wf-m2"))
	startScheduler(t, "it-follow", groupOptions)

	leader := fixture.Binding("leader").Namespace(ns).SchedulerName("it-follow").AffinityGroup("g").Duplicated().ClusterNames("wf-m1").Obj()
	createBinding(t, leader)
	waitClusters(t, leader, []workv1alpha2.TargetCluster{{Name: "wf-m1"}})

	follower := fixture.Binding("follower").Namespace(ns).SchedulerName("it-follow").AffinityGroup("g").Duplicated().ClusterNames("wf-m2").Obj()
	createBinding(t, follower)
	eventually(t, "the follower refused", func() (bool, string) {
		got := getBinding(t, ns, follower.Name)
		cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.Scheduled)
		if cond == nil || cond.Reason != workv1alpha2.BindingReasonNoClusterFit {
			return false, fmt.Sprintf("condition %+v", cond)
		}
		return true, ""
	})

	got := getBinding(t, ns, leader.Name)
	got.Spec.Placement.ClusterAffinity.ClusterNames = []string{"wf-m2"}
	if err := apiClient.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitClusters(t, leader, []workv1alpha2.TargetCluster{{Name: "wf-m2"}})
	waitClusters(t, follower, []workv1alpha2.TargetCluster{{Name: "wf-m2"}})
}
