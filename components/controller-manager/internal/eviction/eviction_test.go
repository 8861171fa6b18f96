package eviction_test

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/eviction"
)

func targets(pairs ...any) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: pairs[i].(string), Replicas: int32(pairs[i+1].(int))})
	}
	return out
}

func TestEvict(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	task := eviction.Task{Producer: workv1alpha2.EvictionProducerTaintManager, Reason: workv1alpha2.EvictionReasonTaintUntolerated,
		PurgeMode: policyv1alpha1.PurgeModeGracefully, PreservedLabelState: map[string]string{"a": "b"}}

	spec := &workv1alpha2.ResourceBindingSpec{Clusters: targets("m1", 2, "m2", 3)}
	if !eviction.Evict(spec, "m1", task, now) {
		t.Fatal("Evict reported no change")
	}
	if len(spec.Clusters) != 1 || spec.Clusters[0].Name != "m2" || spec.Clusters[0].Replicas != 3 {
		t.Errorf("clusters %v; want m2 only", spec.Clusters)
	}
	if len(spec.GracefulEvictionTasks) != 1 {
		t.Fatalf("tasks %v; want one", spec.GracefulEvictionTasks)
	}
	got := spec.GracefulEvictionTasks[0]
	if got.FromCluster != "m1" || *got.Replicas != 2 || got.Producer != task.Producer || got.Reason != task.Reason ||
		got.PurgeMode != task.PurgeMode || got.PreservedLabelState["a"] != "b" || !got.CreationTimestamp.Equal(&now) ||
		!slices.Equal(got.ClustersBeforeFailover, []string{"m1", "m2"}) {
		t.Errorf("task %+v", got)
	}

	if eviction.Evict(spec, "m1", task, now) {
		t.Error("evicting a cluster no longer scheduled changed the spec")
	}
	// A cluster scheduled again while its eviction is pending leaves once
	// more, under the task it already has.
	spec.Clusters = append(spec.Clusters, workv1alpha2.TargetCluster{Name: "m1", Replicas: 1})
	if !eviction.Evict(spec, "m1", task, now) || len(spec.GracefulEvictionTasks) != 1 || len(spec.Clusters) != 1 {
		t.Errorf("re-evicting: clusters %v tasks %v", spec.Clusters, spec.GracefulEvictionTasks)
	}

	// Without a state to preserve, the clusters before are not recorded.
	spec = &workv1alpha2.ResourceBindingSpec{Clusters: targets("m1", 1)}
	eviction.Evict(spec, "m1", eviction.Task{Producer: "p", Reason: "r"}, now)
	if spec.GracefulEvictionTasks[0].ClustersBeforeFailover != nil {
		t.Error("clusters before failover recorded without a preserved state")
	}

	// A workload without replicas records none.
	spec = &workv1alpha2.ResourceBindingSpec{Clusters: targets("m1", 0)}
	eviction.Evict(spec, "m1", task, now)
	if spec.GracefulEvictionTasks[0].Replicas != nil {
		t.Error("replicas recorded for a workload without any")
	}
}

func TestAssess(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-ago)); return &t }
	healthy := workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m2", Applied: true, Health: workv1alpha2.ResourceHealthy}}}
	starting := workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m2", Applied: true, Health: workv1alpha2.ResourceUnhealthy}}}
	unknown := workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m2", Applied: true, Health: workv1alpha2.ResourceUnknown}}}
	task := func(created *metav1.Time, mutate ...func(*workv1alpha2.GracefulEvictionTask)) workv1alpha2.GracefulEvictionTask {
		t := workv1alpha2.GracefulEvictionTask{FromCluster: "m1", Reason: "TaintUntolerated", Producer: "TaintManager", CreationTimestamp: created}
		for _, m := range mutate {
			m(&t)
		}
		return t
	}
	tests := []struct {
		name     string
		clusters []workv1alpha2.TargetCluster
		status   workv1alpha2.ResourceBindingStatus
		task     workv1alpha2.GracefulEvictionTask
		done     bool
		recheck  time.Duration
	}{
		{"replacement healthy", targets("m2", 1), healthy, task(at(time.Minute)), true, 0},
		{"replacement starting: kept until the timeout", targets("m2", 1), starting, task(at(time.Minute)), false, 9 * time.Minute},
		{"health unknown is not healthy", targets("m2", 1), unknown, task(at(time.Minute)), false, 9 * time.Minute},
		{"replacement not reported yet", targets("m2", 1), workv1alpha2.ResourceBindingStatus{}, task(at(time.Minute)), false, 9 * time.Minute},
		{"scheduled nowhere: kept", nil, healthy, task(at(time.Minute)), false, 9 * time.Minute},
		{"timed out", targets("m2", 1), starting, task(at(11 * time.Minute)), true, 0},
		{"own grace period", targets("m2", 1), starting, task(at(time.Minute), func(t *workv1alpha2.GracefulEvictionTask) { t.GracePeriodSeconds = ptr.To[int32](30) }), true, 0},
		{"own longer grace period", targets("m2", 1), starting, task(at(11*time.Minute), func(t *workv1alpha2.GracefulEvictionTask) { t.GracePeriodSeconds = ptr.To[int32](3600) }), false, 49 * time.Minute},
		{"directly: kept as the others", targets("m2", 1), starting, task(at(time.Minute), func(t *workv1alpha2.GracefulEvictionTask) { t.PurgeMode = policyv1alpha1.PurgeModeDirectly }), false, 9 * time.Minute},
		{"suppressed: kept past the timeout, even when healthy", targets("m2", 1), healthy, task(at(time.Hour), func(t *workv1alpha2.GracefulEvictionTask) { t.SuppressDeletion = ptr.To(true) }), false, 0},
		{"suppression lifted", targets("m2", 1), starting, task(at(0), func(t *workv1alpha2.GracefulEvictionTask) { t.SuppressDeletion = ptr.To(false) }), true, 0},
		{"no creation time: stamped and kept", targets("m2", 1), starting, task(nil), false, 10 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &workv1alpha2.ResourceBindingSpec{Clusters: tc.clusters, GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{tc.task}}
			a := eviction.Assess(spec, &tc.status, now, eviction.DefaultTimeout)
			if done := slices.Contains(a.Done, "m1"); done != tc.done {
				t.Fatalf("done %v, want %v (assessment %+v)", done, tc.done, a)
			}
			if !tc.done && (len(a.Tasks) != 1 || a.Tasks[0].CreationTimestamp == nil) {
				t.Errorf("kept tasks %+v", a.Tasks)
			}
			if a.RecheckAfter != tc.recheck {
				t.Errorf("recheck after %v, want %v", a.RecheckAfter, tc.recheck)
			}
			if !a.Changed(spec.GracefulEvictionTasks) && (tc.done || tc.task.CreationTimestamp == nil) {
				t.Error("Changed = false for a changed assessment")
			}
		})
	}
}

func TestPreservedState(t *testing.T) {
	items := []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m1", Status: &runtime.RawExtension{Raw: []byte(`{"jobId":"abc","replicas":3}`)}},
		{ClusterName: "m2"},
	}
	rules := []policyv1alpha1.StatePreservationRule{{AliasLabelName: "failover.example/job-id", JSONPath: "{.jobId}"}, {AliasLabelName: "failover.example/replicas", JSONPath: "{.replicas}"}}
	got, err := eviction.PreservedState(rules, items, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if got["failover.example/job-id"] != "abc" || got["failover.example/replicas"] != "3" {
		t.Errorf("state %v", got)
	}
	for name, tc := range map[string]struct {
		rules   []policyv1alpha1.StatePreservationRule
		cluster string
	}{
		"no status reported":   {rules, "m2"},
		"path selects nothing": {[]policyv1alpha1.StatePreservationRule{{AliasLabelName: "x", JSONPath: "{.missing}"}}, "m1"},
		"bad path":             {[]policyv1alpha1.StatePreservationRule{{AliasLabelName: "x", JSONPath: "{.a["}}, "m1"},
	} {
		if _, err := eviction.PreservedState(tc.rules, items, tc.cluster); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if got, err := eviction.PreservedState(nil, nil, "m1"); err != nil || got != nil {
		t.Errorf("no rules: %v, %v", got, err)
	}
}
