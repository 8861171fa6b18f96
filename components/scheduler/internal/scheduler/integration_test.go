package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/scheduler"
	"github.com/flotilla-io/flotilla/internal/events"
)

const waitFor = 20 * time.Second

// createCluster creates the cluster with its status (a subresource) and
// deletes it when the test ends.
func createCluster(tb testing.TB, b *fixture.ClusterBuilder) *clusterv1alpha1.Cluster {
	tb.Helper()
	ctx := context.Background()
	want := b.Obj().DeepCopy()
	c := want.DeepCopy()
	c.Status = clusterv1alpha1.ClusterStatus{}
	if err := apiClient.Create(ctx, c); err != nil {
		tb.Fatalf("creating cluster %s: %v", c.Name, err)
	}
	c.Status = want.Status
	if err := apiClient.Status().Update(ctx, c); err != nil {
		tb.Fatalf("setting status of cluster %s: %v", c.Name, err)
	}
	tb.Cleanup(func() {
		if err := apiClient.Delete(context.Background(), c); err != nil && !apierrors.IsNotFound(err) {
			tb.Errorf("deleting cluster %s: %v", c.Name, err)
		}
	})
	return c
}

func createBinding(tb testing.TB, rb *workv1alpha2.ResourceBinding) {
	tb.Helper()
	if err := apiClient.Create(context.Background(), rb); err != nil {
		tb.Fatalf("creating binding %s: %v", rb.Name, err)
	}
	tb.Cleanup(func() { _ = apiClient.Delete(context.Background(), rb) })
}

// eventually polls cond until it holds or the wait ends, then reports the
// last explanation.
func eventually(tb testing.TB, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(waitFor)
	var why string
	for time.Now().Before(deadline) {
		var ok bool
		if ok, why = cond(); ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("timed out waiting for %s: %s", what, why)
}

func getBinding(tb testing.TB, namespace, name string) *workv1alpha2.ResourceBinding {
	tb.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	if err := apiClient.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, rb); err != nil {
		tb.Fatalf("reading binding %s: %v", name, err)
	}
	return rb
}

// waitClusters waits until spec.clusters equals want and the binding is
// scheduled for its current generation.
func waitClusters(tb testing.TB, rb *workv1alpha2.ResourceBinding, want []workv1alpha2.TargetCluster) *workv1alpha2.ResourceBinding {
	tb.Helper()
	var got *workv1alpha2.ResourceBinding
	eventually(tb, "schedule "+fmt.Sprint(want), func() (bool, string) {
		got = getBinding(tb, rb.Namespace, rb.Name)
		if diff := cmp.Diff(want, got.Spec.Clusters); diff != "" {
			return false, "clusters (-want +got):\n" + diff
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha2.Scheduled) || got.Status.SchedulerObservedGeneration != got.Generation {
			return false, fmt.Sprintf("status %+v at generation %d", got.Status, got.Generation)
		}
		return true, ""
	})
	return got
}

var T = fixture.T

func TestIntegrationWeightedBinding(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	s := startScheduler(t, "it-weighted", scheduler.Options{TemplateEvents: true})
	waitSchedulerSees(t, s, createCluster(t, fixture.Cluster("w-a")), createCluster(t, fixture.Cluster("w-b")))

	rb := fixture.Binding("weighted").Replicas(3).SchedulerName("it-weighted").ClusterNames("w-a", "w-b").
		Weighted(fixture.Weight{Cluster: "w-a", Weight: 2}, fixture.Weight{Cluster: "w-b", Weight: 1}).Obj()
	rb.Spec.Resource.UID = "d2b7a3c4-0000-4000-8000-000000000001"
	createBinding(t, rb)

	got := waitClusters(t, rb, []workv1alpha2.TargetCluster{T("w-a", 2), T("w-b", 1)})
	placement, _ := json.Marshal(got.Spec.Placement)
	if a := got.Annotations[policyv1alpha1.AppliedPlacementAnnotation]; a != string(placement) {
		t.Errorf("applied placement %q, want %q", a, placement)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.Scheduled)
	if cond.Reason != workv1alpha2.BindingReasonSuccess || cond.ObservedGeneration != got.Generation {
		t.Errorf("condition %+v", cond)
	}
	if got.Status.LastScheduledTime == nil {
		t.Error("lastScheduledTime not set")
	}
	// The schedule cleared the managed fields the binding was created with,
	// and the status write after it tracked none.
	if mf := got.ManagedFields; len(mf) != 0 {
		t.Errorf("scheduled binding has managed fields %+v", mf)
	}
	eventually(t, "ScheduleBindingSucceed events on the binding and the template", func() (bool, string) {
		var list eventsv1.EventList
		if err := apiClient.List(ctx, &list, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		onBinding, onTemplate := false, false
		for _, e := range list.Items {
			if e.Reason != events.ReasonScheduleBindingSucceed {
				continue
			}
			onBinding = onBinding || (e.Regarding.Kind == "ResourceBinding" && e.Regarding.Name == rb.Name)
			onTemplate = onTemplate || (e.Regarding.Kind == "Deployment" && e.Regarding.Name == rb.Spec.Resource.Name)
		}
		return onBinding && onTemplate, fmt.Sprintf("binding %v template %v among %d events", onBinding, onTemplate, len(list.Items))
	})

	// Scaling keeps the steady assignment: only the difference moves.
	got.Spec.Replicas = 6
	if err := apiClient.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitClusters(t, rb, []workv1alpha2.TargetCluster{T("w-a", 4), T("w-b", 2)})

	// An unchanged binding is not rescheduled, whatever clusters do.
	settled := getBinding(t, rb.Namespace, rb.Name)
	before := s.Stats()
	c := &clusterv1alpha1.Cluster{}
	if err := apiClient.Get(ctx, client.ObjectKey{Name: "w-a"}, c); err != nil {
		t.Fatal(err)
	}
	c.Labels = map[string]string{"touched": "yes"}
	if err := apiClient.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	createCluster(t, fixture.Cluster("w-c"))
	time.Sleep(time.Second)
	after := getBinding(t, rb.Namespace, rb.Name)
	if after.ResourceVersion != settled.ResourceVersion {
		t.Errorf("an unchanged binding was written: resourceVersion %s -> %s", settled.ResourceVersion, after.ResourceVersion)
	}
	if st := s.Stats(); st.SpecWrites != before.SpecWrites || st.StatusWrites != before.StatusWrites || st.Attempts != before.Attempts {
		t.Errorf("scheduler acted on an unchanged binding: %+v -> %+v", before, st)
	}
}

func TestIntegrationDynamicScaleIsSteady(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	s := startScheduler(t, "it-dynamic", scheduler.Options{})
	waitSchedulerSees(t, s, createCluster(t, fixture.Cluster("dy-a").Pods(30)), createCluster(t, fixture.Cluster("dy-b").Pods(10)))

	rb := fixture.Binding("dynamic").Replicas(8).SchedulerName("it-dynamic").ClusterNames("dy-a", "dy-b").Dynamic().Obj()
	createBinding(t, rb)
	got := waitClusters(t, rb, []workv1alpha2.TargetCluster{T("dy-a", 6), T("dy-b", 2)})

	got.Spec.Replicas = 12
	if err := apiClient.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	// The 4 new replicas are divided by free room (30:10), the 8 stay.
	got = waitClusters(t, rb, []workv1alpha2.TargetCluster{T("dy-a", 9), T("dy-b", 3)})

	got.Spec.Replicas = 4
	if err := apiClient.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	got = waitClusters(t, rb, []workv1alpha2.TargetCluster{T("dy-a", 3), T("dy-b", 1)})

	// A spec change that does not touch placement only moves
	// schedulerObservedGeneration.
	writes := s.Stats().SpecWrites
	got.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	if err := apiClient.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	got = waitClusters(t, rb, []workv1alpha2.TargetCluster{T("dy-a", 3), T("dy-b", 1)})
	if s.Stats().SpecWrites != writes {
		t.Error("an unrelated spec change rewrote spec.clusters")
	}

	// A rebalance request schedules once, afresh, and settles.
	attempts := s.Stats().Attempts
	triggered := metav1.NewTime(time.Now().Add(time.Second).Truncate(time.Second))
	got.Spec.RescheduleTriggeredAt = &triggered
	if err := apiClient.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "lastScheduledTime to pass rescheduleTriggeredAt", func() (bool, string) {
		got = getBinding(t, rb.Namespace, rb.Name)
		last := got.Status.LastScheduledTime
		return last != nil && !last.Before(&triggered), fmt.Sprintf("lastScheduledTime %v", last)
	})
	time.Sleep(500 * time.Millisecond)
	if n := s.Stats().Attempts - attempts; n != 1 {
		t.Errorf("a rebalance took %d scheduling attempts, want 1", n)
	}
}

func TestIntegrationUnschedulableUntilAClusterFits(t *testing.T) {
	needAPIServer(t)
	startScheduler(t, "it-unsched", scheduler.Options{})
	createCluster(t, fixture.Cluster("un-a").Taint(clusterv1alpha1.TaintClusterNotReady, "", "NoSchedule"))

	rb := fixture.Binding("waiting").Replicas(2).SchedulerName("it-unsched").ClusterNames("un-a", "un-b").Obj()
	createBinding(t, rb)
	eventually(t, "Scheduled=False NoClusterFit", func() (bool, string) {
		got := getBinding(t, rb.Namespace, rb.Name)
		c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.Scheduled)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != workv1alpha2.BindingReasonNoClusterFit {
			return false, fmt.Sprintf("condition %+v", c)
		}
		return true, ""
	})
	got := getBinding(t, rb.Namespace, rb.Name)
	if len(got.Spec.Clusters) != 0 || got.Annotations[policyv1alpha1.AppliedPlacementAnnotation] != "" {
		t.Errorf("a failed schedule wrote the spec: %+v %v", got.Spec.Clusters, got.Annotations)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.Scheduled)
	if want := "cluster(s) had untolerated taint {cluster.karmada.io/not-ready}"; !strings.Contains(c.Message, want) {
		t.Errorf("message %q lacks %q", c.Message, want)
	}

	createCluster(t, fixture.Cluster("un-b"))
	waitClusters(t, rb, []workv1alpha2.TargetCluster{T("un-b", 2)})
}

// TestIntegrationDuplicatedFollowsClusters: a Duplicated binding spreads to
// a cluster that becomes usable after it was scheduled (its taint lifted,
// a new cluster joining); a Divided one stays where it is.
func TestIntegrationDuplicatedFollowsClusters(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	s := startScheduler(t, "it-refit", scheduler.Options{})
	tainted := createCluster(t, fixture.Cluster("refit-b").Taint(clusterv1alpha1.TaintClusterNotReady, "", "NoSchedule"))
	waitSchedulerSees(t, s, createCluster(t, fixture.Cluster("refit-a")), tainted)

	dup := fixture.Binding("everywhere").Replicas(2).SchedulerName("it-refit").ClusterNames("refit-a", "refit-b", "refit-c").Obj()
	createBinding(t, dup)
	div := fixture.Binding("divided").Replicas(2).SchedulerName("it-refit").ClusterNames("refit-a", "refit-b", "refit-c").Weighted().Obj()
	createBinding(t, div)
	waitClusters(t, dup, []workv1alpha2.TargetCluster{T("refit-a", 2)})
	waitClusters(t, div, []workv1alpha2.TargetCluster{T("refit-a", 2)})

	tainted.Spec.Taints = nil
	if err := apiClient.Update(ctx, tainted); err != nil {
		t.Fatal(err)
	}
	waitClusters(t, dup, []workv1alpha2.TargetCluster{T("refit-a", 2), T("refit-b", 2)})
	createCluster(t, fixture.Cluster("refit-c"))
	waitClusters(t, dup, []workv1alpha2.TargetCluster{T("refit-a", 2), T("refit-b", 2), T("refit-c", 2)})
	if got := getBinding(t, div.Namespace, div.Name); !equality.Semantic.DeepEqual(got.Spec.Clusters, []workv1alpha2.TargetCluster{T("refit-a", 2)}) {
		t.Errorf("the divided binding moved: %+v", got.Spec.Clusters)
	}
}

func TestIntegrationDeletedClusterReschedules(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	s := startScheduler(t, "it-deleted", scheduler.Options{})
	doomed := createCluster(t, fixture.Cluster("del-b"))
	waitSchedulerSees(t, s, createCluster(t, fixture.Cluster("del-a")), doomed)

	rb := fixture.Binding("moving").Replicas(4).SchedulerName("it-deleted").ClusterNames("del-a", "del-b").Weighted().Obj()
	createBinding(t, rb)
	waitClusters(t, rb, []workv1alpha2.TargetCluster{T("del-a", 2), T("del-b", 2)})

	if err := apiClient.Delete(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	waitClusters(t, rb, []workv1alpha2.TargetCluster{T("del-a", 4)})
}

func TestIntegrationClusterResourceBinding(t *testing.T) {
	needAPIServer(t)
	startScheduler(t, "it-crb", scheduler.Options{})
	createCluster(t, fixture.Cluster("crb-a"))
	createCluster(t, fixture.Cluster("crb-b").API("rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole"))

	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "system.reader-clusterrole"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:      workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "system:reader"},
			SchedulerName: "it-crb",
			Placement:     &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"crb-a", "crb-b"}}},
		},
	}
	if err := apiClient.Create(context.Background(), crb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiClient.Delete(context.Background(), crb) })
	// Only crb-b serves ClusterRoles; a non-workload carries no count.
	eventually(t, "ClusterResourceBinding scheduled", func() (bool, string) {
		got := &workv1alpha2.ClusterResourceBinding{}
		if err := apiClient.Get(context.Background(), client.ObjectKeyFromObject(crb), got); err != nil {
			return false, err.Error()
		}
		if diff := cmp.Diff([]workv1alpha2.TargetCluster{{Name: "crb-b"}}, got.Spec.Clusters); diff != "" {
			return false, diff
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha2.Scheduled), "not scheduled"
	})
}

// TestIntegrationOnlyTargetDeleted: bindings whose only cluster is being
// deleted fit nowhere else, and still leave it, as Karmada cleans up the
// result of a scheduling that finds no cluster: were the cluster kept, its
// Works would be written again while the cluster controller removes them.
func TestIntegrationOnlyTargetDeleted(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	s := startScheduler(t, "it-only", scheduler.Options{})
	doomed := createCluster(t, fixture.Cluster("only-a"))
	waitSchedulerSees(t, s, doomed)
	dup := fixture.Binding("only-dup").Replicas(2).SchedulerName("it-only").ClusterNames("only-a").Obj()
	div := fixture.Binding("only-div").Replicas(2).SchedulerName("it-only").ClusterNames("only-a").Weighted().Obj()
	for _, rb := range []*workv1alpha2.ResourceBinding{dup, div} {
		createBinding(t, rb)
		waitClusters(t, rb, []workv1alpha2.TargetCluster{T("only-a", 2)})
	}

	// A finalizer holds the deletion, as the controller-manager's does.
	doomed.Finalizers = append(doomed.Finalizers, "flotilla.io/test")
	if err := apiClient.Update(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := &clusterv1alpha1.Cluster{}
		if err := apiClient.Get(ctx, client.ObjectKey{Name: "only-a"}, c); err == nil && len(c.Finalizers) > 0 {
			c.Finalizers = nil
			_ = apiClient.Update(ctx, c)
		}
	})
	if err := apiClient.Delete(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	for _, rb := range []*workv1alpha2.ResourceBinding{dup, div} {
		eventually(t, rb.Name+" off the deleting cluster, not scheduled", func() (bool, string) {
			got := getBinding(t, rb.Namespace, rb.Name)
			cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.Scheduled)
			ok := len(got.Spec.Clusters) == 0 && cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == workv1alpha2.BindingReasonNoClusterFit
			return ok, fmt.Sprintf("clusters %v, Scheduled %+v", got.Spec.Clusters, cond)
		})
	}
}
