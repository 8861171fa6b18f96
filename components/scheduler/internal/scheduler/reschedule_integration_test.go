package scheduler_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/scheduler"
)

// changeCluster applies mutate to the named cluster, retrying on conflicts.
func changeCluster(tb testing.TB, name string, mutate func(*clusterv1alpha1.Cluster)) {
	tb.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := apiClient.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		mutate(c)
		return apiClient.Update(context.Background(), c)
	})
	if err != nil {
		tb.Fatalf("changing cluster %s: %v", name, err)
	}
}

// changeClusterStatus applies mutate to the status of the named cluster.
func changeClusterStatus(tb testing.TB, name string, mutate func(*clusterv1alpha1.Cluster)) {
	tb.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := apiClient.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		mutate(c)
		return apiClient.Status().Update(context.Background(), c)
	})
	if err != nil {
		tb.Fatalf("changing the status of cluster %s: %v", name, err)
	}
}

func setLabel(k, v string) func(*clusterv1alpha1.Cluster) {
	return func(c *clusterv1alpha1.Cluster) {
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels[k] = v
	}
}

func dropLabel(k string) func(*clusterv1alpha1.Cluster) {
	return func(c *clusterv1alpha1.Cluster) { delete(c.Labels, k) }
}

func setTaints(taints ...corev1.Taint) func(*clusterv1alpha1.Cluster) {
	return func(c *clusterv1alpha1.Cluster) { c.Spec.Taints = taints }
}

func selecting(k, v string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}}
}

// readBinding reads a ResourceBinding or ClusterResourceBinding afresh.
func readBinding(tb testing.TB, obj client.Object) scheduler.Binding {
	tb.Helper()
	fresh := obj.DeepCopyObject().(client.Object)
	if err := apiClient.Get(context.Background(), client.ObjectKeyFromObject(obj), fresh); err != nil {
		tb.Fatalf("reading binding %s: %v", obj.GetName(), err)
	}
	b, ok := scheduler.AsBinding(fresh)
	if !ok {
		tb.Fatalf("%T is not a binding", fresh)
	}
	return b
}

// waitTargets waits until spec.clusters of either binding kind equals want
// and the binding is scheduled for its current generation.
func waitTargets(tb testing.TB, obj client.Object, want ...workv1alpha2.TargetCluster) {
	tb.Helper()
	eventually(tb, fmt.Sprintf("%s on %v", obj.GetName(), want), func() (bool, string) {
		b := readBinding(tb, obj)
		if diff := cmp.Diff(want, b.Spec.Clusters); diff != "" {
			return false, "clusters (-want +got):\n" + diff
		}
		if !meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha2.Scheduled) || b.Status.SchedulerObservedGeneration != b.Object.GetGeneration() {
			return false, fmt.Sprintf("status %+v at generation %d", b.Status, b.Object.GetGeneration())
		}
		return true, ""
	})
}

// waitNoFit waits until the binding is on no cluster with Scheduled=False
// NoClusterFit, as Karmada leaves a binding that no cluster fits.
func waitNoFit(tb testing.TB, obj client.Object) {
	tb.Helper()
	eventually(tb, obj.GetName()+" on no cluster, NoClusterFit", func() (bool, string) {
		b := readBinding(tb, obj)
		c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
		if len(b.Spec.Clusters) != 0 || c == nil || c.Status != metav1.ConditionFalse || c.Reason != workv1alpha2.BindingReasonNoClusterFit {
			return false, fmt.Sprintf("clusters %v, condition %+v", b.Spec.Clusters, c)
		}
		return true, ""
	})
}

// barrier proves that a scheduler with a single worker has finished every
// binding queued before it: it moves a cluster of its own into or out of
// the placement of a sentinel binding, which is queued behind everything
// else, and waits for the sentinel's new placement.
type barrier struct {
	sentinel *workv1alpha2.ResourceBinding
	s1, s2   string
	key      string
	on       bool
}

func newBarrier(tb testing.TB, prefix, schedulerName string) *barrier {
	tb.Helper()
	b := &barrier{key: prefix + "-sentinel", s1: prefix + "-s1", s2: prefix + "-s2"}
	createCluster(tb, fixture.Cluster(b.s1).Label(b.key, "yes"))
	createCluster(tb, fixture.Cluster(b.s2))
	b.sentinel = fixture.Binding(prefix + "-sentinel").Replicas(1).SchedulerName(schedulerName).Affinity(selecting(b.key, "yes")).Obj()
	createBinding(tb, b.sentinel)
	waitTargets(tb, b.sentinel, T(b.s1, 1))
	return b
}

func (b *barrier) pass(tb testing.TB) {
	tb.Helper()
	b.on = !b.on
	if b.on {
		changeCluster(tb, b.s2, setLabel(b.key, "yes"))
		waitTargets(tb, b.sentinel, T(b.s1, 1), T(b.s2, 1))
		return
	}
	changeCluster(tb, b.s2, dropLabel(b.key))
	waitTargets(tb, b.sentinel, T(b.s1, 1))
}

// TestIntegrationRelabelReschedules is issue 17's first point: a
// Duplicated binding placed by a label selector leaves a cluster whose
// labels stop matching and returns when they match again; so does a
// binding without replicas, of either kind. One that no cluster fits any
// more is taken off every cluster, as Karmada does.
func TestIntegrationRelabelReschedules(t *testing.T) {
	needAPIServer(t)
	startScheduler(t, "it-relabel", scheduler.Options{})
	createCluster(t, fixture.Cluster("rl-a").Label("env", "prod").Label("solo", "yes"))
	createCluster(t, fixture.Cluster("rl-b").Label("env", "prod"))
	createCluster(t, fixture.Cluster("rl-c").Label("env", "dev"))

	dup := fixture.Binding("rl-dup").Replicas(2).SchedulerName("it-relabel").Affinity(selecting("env", "prod")).Obj()
	createBinding(t, dup)
	solo := fixture.Binding("rl-solo").Replicas(1).SchedulerName("it-relabel").Affinity(selecting("solo", "yes")).Obj()
	createBinding(t, solo)
	// A ConfigMap under a Divided placement: without replicas it goes to
	// every cluster that fits, like a Duplicated one.
	cm := fixture.Binding("rl-settings").Resource("v1", "ConfigMap").SchedulerName("it-relabel").Affinity(selecting("env", "prod")).Weighted().Obj()
	createBinding(t, cm)
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "rl-reader-clusterrole"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:      workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "rl-reader"},
			SchedulerName: "it-relabel",
			Placement:     &policyv1alpha1.Placement{ClusterAffinity: selecting("env", "prod")},
		},
	}
	if err := apiClient.Create(context.Background(), crb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiClient.Delete(context.Background(), crb) })

	waitTargets(t, dup, T("rl-a", 2), T("rl-b", 2))
	waitTargets(t, solo, T("rl-a", 1))
	waitTargets(t, cm, T("rl-a", 0), T("rl-b", 0))
	waitTargets(t, crb, T("rl-a", 0), T("rl-b", 0))

	changeCluster(t, "rl-a", func(c *clusterv1alpha1.Cluster) {
		c.Labels["env"] = "dev"
		delete(c.Labels, "solo")
	})
	waitTargets(t, dup, T("rl-b", 2))
	waitNoFit(t, solo)
	waitTargets(t, cm, T("rl-b", 0))
	waitTargets(t, crb, T("rl-b", 0))

	changeCluster(t, "rl-a", func(c *clusterv1alpha1.Cluster) {
		c.Labels["env"] = "prod"
		c.Labels["solo"] = "yes"
	})
	waitTargets(t, dup, T("rl-a", 2), T("rl-b", 2))
	waitTargets(t, solo, T("rl-a", 1))
	waitTargets(t, cm, T("rl-a", 0), T("rl-b", 0))
	waitTargets(t, crb, T("rl-a", 0), T("rl-b", 0))

	// A field the affinity reads counts like a label.
	region := fixture.Binding("rl-region").Replicas(1).SchedulerName("it-relabel").Affinity(&policyv1alpha1.ClusterAffinity{
		FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: policyv1alpha1.RegionField, Operator: corev1.NodeSelectorOpIn, Values: []string{"eu"}},
		}},
	}).Obj()
	changeCluster(t, "rl-c", func(c *clusterv1alpha1.Cluster) { c.Spec.Region = "eu" })
	createBinding(t, region)
	waitTargets(t, region, T("rl-c", 1))
	changeCluster(t, "rl-b", func(c *clusterv1alpha1.Cluster) { c.Spec.Region = "eu" })
	waitTargets(t, region, T("rl-b", 1), T("rl-c", 1))
	changeCluster(t, "rl-c", func(c *clusterv1alpha1.Cluster) { c.Spec.Region = "us" })
	waitTargets(t, region, T("rl-b", 1))
}

// TestIntegrationTaintsKeepCurrentPlacements: a taint change is a cluster
// change, but as in Karmada the TaintToleration filter only keeps new
// placements away; a cluster holding the binding keeps it, NoExecute
// included (evicting is failover's job).
func TestIntegrationTaintsKeepCurrentPlacements(t *testing.T) {
	needAPIServer(t)
	s := startScheduler(t, "it-taints", scheduler.Options{Workers: 1})
	bar := newBarrier(t, "tt", "it-taints")
	createCluster(t, fixture.Cluster("tt-a").Label("pool", "tt"))
	createCluster(t, fixture.Cluster("tt-b").Label("pool", "tt"))
	createCluster(t, fixture.Cluster("tt-c").Label("pool", "tt").Taint("dedicated", "", corev1.TaintEffectNoSchedule))

	rb := fixture.Binding("tt-app").Replicas(2).SchedulerName("it-taints").Affinity(selecting("pool", "tt")).Obj()
	createBinding(t, rb)
	waitTargets(t, rb, T("tt-a", 2), T("tt-b", 2))

	// NoExecute on a current cluster: requeued, placed again, unchanged.
	before := readBinding(t, rb)
	attempts := s.Stats().Attempts
	changeCluster(t, "tt-b", setTaints(corev1.Taint{Key: "outage", Effect: corev1.TaintEffectNoExecute}))
	bar.pass(t)
	if after := readBinding(t, rb); after.Object.GetResourceVersion() != before.Object.GetResourceVersion() {
		t.Errorf("a NoExecute taint on a current cluster rewrote the binding: %v", after.Spec.Clusters)
	}
	if s.Stats().Attempts == attempts {
		t.Error("the taint did not requeue the binding")
	}

	// The NoSchedule taint lifted: tt-c fits and is added.
	changeCluster(t, "tt-c", setTaints())
	waitTargets(t, rb, T("tt-a", 2), T("tt-b", 2), T("tt-c", 2))
	// Tainted again, it keeps what it holds.
	before = readBinding(t, rb)
	changeCluster(t, "tt-c", setTaints(corev1.Taint{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}))
	bar.pass(t)
	if after := readBinding(t, rb); after.Object.GetResourceVersion() != before.Object.GetResourceVersion() {
		t.Errorf("a NoSchedule taint on a current cluster rewrote the binding: %v", after.Spec.Clusters)
	}
	// Relabelled out, it is left; relabelled back, the taint keeps the
	// binding away, as from any new placement.
	changeCluster(t, "tt-c", dropLabel("pool"))
	waitTargets(t, rb, T("tt-a", 2), T("tt-b", 2))
	before = readBinding(t, rb)
	changeCluster(t, "tt-c", setLabel("pool", "tt"))
	bar.pass(t)
	if after := readBinding(t, rb); after.Object.GetResourceVersion() != before.Object.GetResourceVersion() {
		t.Errorf("the binding went back to a cluster with an untolerated NoSchedule taint: %v", after.Spec.Clusters)
	}
	changeCluster(t, "tt-c", setTaints())
	waitTargets(t, rb, T("tt-a", 2), T("tt-b", 2), T("tt-c", 2))
}

// TestIntegrationDividedFollowsOnlyDeletion: as in Karmada, Divided
// bindings — static weights, dynamic weights, Aggregated — keep their
// replicas where they are when a cluster's labels change, and move off a
// cluster as soon as its deletion starts.
func TestIntegrationDividedFollowsOnlyDeletion(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	startScheduler(t, "it-divided", scheduler.Options{Workers: 1})
	bar := newBarrier(t, "dv", "it-divided")
	createCluster(t, fixture.Cluster("dv-a").Label("pool", "dv").Pods(3))
	doomed := createCluster(t, fixture.Cluster("dv-b").Label("pool", "dv").Pods(3))
	// The scheduler must have seen both clusters before the bindings come:
	// a Divided binding placed on dv-a alone would stay there, as it should.
	bar.pass(t)

	divided := []*workv1alpha2.ResourceBinding{
		fixture.Binding("dv-static").Replicas(4).SchedulerName("it-divided").Affinity(selecting("pool", "dv")).Weighted().Obj(),
		fixture.Binding("dv-dynamic").Replicas(4).SchedulerName("it-divided").Affinity(selecting("pool", "dv")).Dynamic().Obj(),
		fixture.Binding("dv-aggregated").Replicas(4).SchedulerName("it-divided").Affinity(selecting("pool", "dv")).Aggregated().Obj(),
	}
	settled := map[string]scheduler.Binding{}
	for _, rb := range divided {
		createBinding(t, rb)
		eventually(t, rb.Name+" on both clusters", func() (bool, string) {
			b := readBinding(t, rb)
			ok := len(b.Spec.Clusters) == 2 && meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha2.Scheduled)
			settled[rb.Name] = b
			return ok, fmt.Sprint(b.Spec.Clusters)
		})
	}
	// Room for what leaves dv-b.
	createCluster(t, fixture.Cluster("dv-c").Label("pool", "dv").Pods(100))

	changeCluster(t, "dv-b", dropLabel("pool"))
	bar.pass(t)
	changeCluster(t, "dv-b", setLabel("pool", "dv"))
	bar.pass(t)
	for _, rb := range divided {
		if b := readBinding(t, rb); b.Object.GetResourceVersion() != settled[rb.Name].Object.GetResourceVersion() {
			t.Errorf("%s moved on a label change: %v -> %v", rb.Name, settled[rb.Name].Spec.Clusters, b.Spec.Clusters)
		}
	}

	// A finalizer holds the deletion, as the controller-manager's does.
	changeCluster(t, "dv-b", func(c *clusterv1alpha1.Cluster) { c.Finalizers = append(c.Finalizers, "flotilla.io/test") })
	t.Cleanup(func() {
		c := &clusterv1alpha1.Cluster{}
		if err := apiClient.Get(ctx, client.ObjectKey{Name: "dv-b"}, c); err == nil && len(c.Finalizers) > 0 {
			c.Finalizers = nil
			_ = apiClient.Update(ctx, c)
		}
	})
	if err := apiClient.Delete(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	for _, rb := range divided {
		eventually(t, rb.Name+" off the deleting cluster", func() (bool, string) {
			b := readBinding(t, rb)
			var sum int32
			for _, tc := range b.Spec.Clusters {
				sum += tc.Replicas
			}
			onDoomed := slices.ContainsFunc(b.Spec.Clusters, func(tc workv1alpha2.TargetCluster) bool { return tc.Name == "dv-b" })
			ok := !onDoomed && sum == 4 && meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha2.Scheduled)
			return ok, fmt.Sprint(b.Spec.Clusters)
		})
	}
	changeCluster(t, "dv-b", func(c *clusterv1alpha1.Cluster) { c.Finalizers = nil })
	eventually(t, "dv-b gone", func() (bool, string) {
		err := apiClient.Get(ctx, client.ObjectKey{Name: "dv-b"}, &clusterv1alpha1.Cluster{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// TestIntegrationClusterChangeWithoutEffectWritesNothing: changes that
// move no binding — a label no affinity cares about, a status update, a
// cluster no binding selects — cause no write, whether or not they
// requeue a binding.
func TestIntegrationClusterChangeWithoutEffectWritesNothing(t *testing.T) {
	needAPIServer(t)
	s := startScheduler(t, "it-nowrite", scheduler.Options{Workers: 1})
	bar := newBarrier(t, "nw", "it-nowrite")
	createCluster(t, fixture.Cluster("nw-a").Label("app", "nw"))
	createCluster(t, fixture.Cluster("nw-b").Label("app", "nw"))
	createCluster(t, fixture.Cluster("nw-z"))

	dup := fixture.Binding("nw-dup").Replicas(2).SchedulerName("it-nowrite").Affinity(selecting("app", "nw")).Obj()
	createBinding(t, dup)
	everywhere := fixture.Binding("nw-everywhere").Resource("v1", "ConfigMap").SchedulerName("it-nowrite").Obj()
	createBinding(t, everywhere)
	div := fixture.Binding("nw-div").Replicas(3).SchedulerName("it-nowrite").Affinity(selecting("app", "nw")).Weighted().Obj()
	createBinding(t, div)
	waitTargets(t, dup, T("nw-a", 2), T("nw-b", 2))
	waitTargets(t, div, T("nw-a", 2), T("nw-b", 1))
	eventually(t, "nw-everywhere scheduled", func() (bool, string) {
		b := readBinding(t, everywhere)
		return meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha2.Scheduled), fmt.Sprint(b.Status)
	})
	bar.pass(t)

	watched := []client.Object{dup, everywhere, div}
	versions := map[string]string{}
	for _, obj := range watched {
		versions[obj.GetName()] = readBinding(t, obj).Object.GetResourceVersion()
	}
	before := s.Stats()

	// Requeues every binding on nw-a (recomputed, unchanged).
	changeCluster(t, "nw-a", setLabel("unrelated", "1"))
	// Requeues nothing: status only.
	changeClusterStatus(t, "nw-a", func(c *clusterv1alpha1.Cluster) {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "heartbeat"})
	})
	// A cluster no affinity selects, though the placement-less binding
	// is requeued and finds it still fits.
	changeCluster(t, "nw-z", setLabel("unrelated", "1"))
	bar.pass(t)

	for _, obj := range watched {
		if got := readBinding(t, obj).Object.GetResourceVersion(); got != versions[obj.GetName()] {
			t.Errorf("%s was written: resourceVersion %s -> %s", obj.GetName(), versions[obj.GetName()], got)
		}
	}
	after := s.Stats()
	// The barrier's own sentinel accounts for one spec and one status
	// write.
	if after.SpecWrites-before.SpecWrites != 1 || after.StatusWrites-before.StatusWrites != 1 {
		t.Errorf("writes beyond the sentinel's: %+v -> %+v", before, after)
	}
	if after.Attempts-before.Attempts < 3 {
		t.Errorf("the label change on nw-a was not followed: %d attempts", after.Attempts-before.Attempts)
	}
}
