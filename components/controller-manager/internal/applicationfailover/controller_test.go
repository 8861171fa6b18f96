package applicationfailover

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func item(cluster string, health workv1alpha2.ResourceHealth) workv1alpha2.AggregatedStatusItem {
	return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true, Health: health,
		Status: &runtime.RawExtension{Raw: []byte(`{"observedGeneration":2}`)}}
}

// TestObserve follows one binding through time: a cluster's toleration
// counts from when it was first seen unhealthy, Unknown keeps the count,
// Healthy resets it, and clusters no longer scheduled or being evicted are
// not counted.
func TestObserve(t *testing.T) {
	u := unhealthySince{m: map[types.NamespacedName]map[string]time.Time{}}
	key := types.NamespacedName{Namespace: "ns", Name: "web-deployment"}
	spec := &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}}}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	const toleration = 10 * time.Second
	steps := []struct {
		name  string
		at    time.Duration
		items []workv1alpha2.AggregatedStatusItem
		due   []string
		wait  time.Duration
	}{
		{"m1 unhealthy: counting", 0, []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy"), item("m2", "Healthy")}, nil, 10 * time.Second},
		{"still counting", 4 * time.Second, []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy"), item("m2", "Healthy")}, nil, 6 * time.Second},
		{"unknown keeps the count", 6 * time.Second, []workv1alpha2.AggregatedStatusItem{item("m1", "Unknown"), item("m2", "Healthy")}, nil, 0},
		{"due", 10 * time.Second, []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy"), item("m2", "Unhealthy")}, []string{"m1"}, 10 * time.Second},
		{"healthy resets", 12 * time.Second, []workv1alpha2.AggregatedStatusItem{item("m1", "Healthy"), item("m2", "Unhealthy")}, nil, 8 * time.Second},
		{"counts again from the start", 13 * time.Second, []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy"), item("m2", "Unhealthy")}, nil, 7 * time.Second},
	}
	for _, s := range steps {
		due, wait := u.observe(key, spec, s.items, t0.Add(s.at), toleration)
		if !slices.Equal(due, s.due) || wait != s.wait {
			t.Fatalf("%s: due %v wait %v; want %v, %v", s.name, due, wait, s.due, s.wait)
		}
	}

	// m2 evicted and m1 no longer scheduled: neither counts any more.
	spec.Clusters = []workv1alpha2.TargetCluster{{Name: "m3"}}
	spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "m2"}}
	due, wait := u.observe(key, spec, []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy"), item("m2", "Unhealthy")}, t0.Add(time.Hour), toleration)
	if len(due) != 0 || wait != 0 {
		t.Errorf("clusters not scheduled or evicted counted: due %v wait %v", due, wait)
	}
	if _, ok := u.m[key]; ok {
		t.Error("a binding with nothing counting is still remembered")
	}
}

func TestTask(t *testing.T) {
	rules := &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "gen", JSONPath: "{.observedGeneration}"}}}
	items := []workv1alpha2.AggregatedStatusItem{item("m1", "Unhealthy")}
	tests := []struct {
		name     string
		r        *Reconciler
		app      policyv1alpha1.ApplicationFailoverBehavior
		want     func(t *testing.T, got taskFields)
		wantFail bool
	}{
		{name: "gracefully, with its grace period", r: &Reconciler{Graceful: true},
			app: policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeGracefully, GracePeriodSeconds: ptr.To[int32](60)},
			want: func(t *testing.T, got taskFields) {
				if got.grace == nil || *got.grace != 60 || got.suppress != nil {
					t.Errorf("task %+v", got)
				}
			}},
		{name: "unset purge mode is Gracefully", r: &Reconciler{Graceful: true},
			want: func(t *testing.T, got taskFields) {
				if got.purge != policyv1alpha1.PurgeModeGracefully {
					t.Errorf("purge mode %s", got.purge)
				}
			}},
		{name: "gracefully needs the gate", r: &Reconciler{Graceful: false},
			app: policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeGracefully}, wantFail: true},
		{name: "never suppresses the deletion", r: &Reconciler{},
			app: policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeNever},
			want: func(t *testing.T, got taskFields) {
				if got.suppress == nil || !*got.suppress {
					t.Errorf("task %+v", got)
				}
			}},
		{name: "state preserved with the gate", r: &Reconciler{PreserveState: true},
			app: policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly, StatePreservation: rules},
			want: func(t *testing.T, got taskFields) {
				if got.state["gen"] != "2" {
					t.Errorf("state %v", got.state)
				}
			}},
		{name: "no state without the gate", r: &Reconciler{},
			app: policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly, StatePreservation: rules},
			want: func(t *testing.T, got taskFields) {
				if got.state != nil {
					t.Errorf("state %v", got.state)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.name = ResourceBindingControllerName
			task, err := tc.r.task(&tc.app, items, "m1")
			if tc.wantFail {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if task.Producer != ResourceBindingControllerName || task.Reason != workv1alpha2.EvictionReasonApplicationFailure {
				t.Errorf("producer %q reason %q", task.Producer, task.Reason)
			}
			tc.want(t, taskFields{purge: task.PurgeMode, grace: task.GracePeriodSeconds, suppress: task.SuppressDeletion, state: task.PreservedLabelState})
		})
	}
}

type taskFields struct {
	purge    policyv1alpha1.PurgeMode
	grace    *int32
	suppress *bool
	state    map[string]string
}
