package scheduler

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
)

// scheduled marks a binding as scheduled for its current spec, the way the
// scheduler leaves it.
func scheduled(b *fixture.BindingBuilder) *workv1alpha2.ResourceBinding {
	rb := b.Obj()
	rb.Generation = 3
	raw, _ := json.Marshal(rb.Spec.Placement)
	rb.Annotations = map[string]string{policyv1alpha1.AppliedPlacementAnnotation: string(raw)}
	rb.Status.SchedulerObservedGeneration = 3
	rb.Status.LastScheduledTime = &metav1.Time{Time: time.Unix(2000, 0)}
	rb.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: workv1alpha2.BindingReasonSuccess}}
	return rb
}

func TestEvaluate(t *testing.T) {
	exists := func(name string) bool { return name != "gone" }
	tests := []struct {
		name  string
		rb    func() *workv1alpha2.ResourceBinding
		want  Action
		fresh bool
	}{
		{"new binding", func() *workv1alpha2.ResourceBinding { return fixture.Binding("x").Replicas(2).Obj() }, Schedule, false},
		{"unchanged binding", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 2), fixture.T("b", 1)))
		}, Nothing, false},
		{"placement changed", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 3)))
			rb.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}}
			return rb
		}, Schedule, false},
		{"annotation formatted differently", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 3)))
			rb.Annotations[policyv1alpha1.AppliedPlacementAnnotation] = "{ \"replicaScheduling\": {\"replicaDivisionPreference\":\"Weighted\",\"replicaSchedulingType\":\"Divided\"}}"
			return rb
		}, Nothing, false},
		{"divided replicas changed", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 2), fixture.T("b", 1)))
			rb.Spec.Replicas = 5
			return rb
		}, Schedule, false},
		{"duplicated replicas changed", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Scheduled(fixture.T("a", 3), fixture.T("b", 3)))
			rb.Spec.Replicas = 4
			return rb
		}, Schedule, false},
		{"component replicas changed", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Dynamic().Component("head", 1).Component("worker", 2).Scheduled(workv1alpha2.TargetCluster{
				Name: "a", Components: []workv1alpha2.ComponentReplicas{{Name: "head", Replicas: 1}, {Name: "worker", Replicas: 2}}}))
			rb.Spec.Components[1].Replicas = 3
			return rb
		}, Schedule, false},
		{"components unchanged", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Dynamic().Component("head", 1).Component("worker", 2).Scheduled(workv1alpha2.TargetCluster{
				Name: "a", Components: []workv1alpha2.ComponentReplicas{{Name: "head", Replicas: 1}, {Name: "worker", Replicas: 2}}}))
		}, Nothing, false},
		{"rebalance requested", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 3)))
			rb.Spec.RescheduleTriggeredAt = &metav1.Time{Time: time.Unix(3000, 0)}
			return rb
		}, Schedule, true},
		{"rebalance already done", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 3)))
			rb.Spec.RescheduleTriggeredAt = &metav1.Time{Time: time.Unix(2000, 0)}
			return rb
		}, Nothing, false},
		{"target cluster deleted", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 2), fixture.T("gone", 1)))
		}, Schedule, false},
		{"last attempt failed", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 3)))
			rb.Status.Conditions[0].Status = metav1.ConditionFalse
			return rb
		}, Schedule, false},
		{"unrelated spec change", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 3)))
			rb.Generation = 4
			return rb
		}, ObserveGeneration, false},
		{"suspended", func() *workv1alpha2.ResourceBinding {
			rb := fixture.Binding("x").Replicas(2).Obj()
			rb.Spec.Suspension = &workv1alpha2.Suspension{Scheduling: ptr.To(true)}
			return rb
		}, Nothing, false},
		{"no placement", func() *workv1alpha2.ResourceBinding {
			return fixture.Binding("x").Replicas(2).Placement(nil).Obj()
		}, Nothing, false},
		{"being deleted", func() *workv1alpha2.ResourceBinding {
			rb := fixture.Binding("x").Replicas(2).Obj()
			rb.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			return rb
		}, Nothing, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := AsBinding(tc.rb())
			got := Evaluate(b, exists)
			if got.Action != tc.want || got.Fresh != tc.fresh {
				t.Errorf("Evaluate = %+v, want action %d fresh %v", got, tc.want, tc.fresh)
			}
		})
	}
}

func TestRefit(t *testing.T) {
	tests := []struct {
		name string
		rb   func() *workv1alpha2.ResourceBinding
		want bool
	}{
		{"scheduled duplicated", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Replicas(3).Scheduled(fixture.T("a", 3)))
		}, true},
		{"scheduled without replicas, divided placement", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Weighted().Scheduled(fixture.T("a", 0)))
		}, true},
		{"scheduled divided workload", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("a", 3)))
		}, false},
		{"divided components", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Component("head", 1).Weighted().Scheduled(fixture.T("a", 0)))
		}, false},
		{"not scheduled yet", func() *workv1alpha2.ResourceBinding { return fixture.Binding("x").Replicas(3).Obj() }, false},
		{"no placement (attached binding)", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Placement(nil).Scheduled(fixture.T("a", 0)))
		}, false},
		{"scheduling suspended", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Scheduled(fixture.T("a", 3)))
			rb.Spec.Suspension = &workv1alpha2.Suspension{Scheduling: ptr.To(true)}
			return rb
		}, false},
		{"being deleted", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Scheduled(fixture.T("a", 3)))
			rb.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			return rb
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := AsBinding(tc.rb())
			if got := Refit(b); got != tc.want {
				t.Errorf("Refit = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLaterOf(t *testing.T) {
	now := metav1.Time{Time: time.Unix(100, 0)}
	ahead := &metav1.Time{Time: time.Unix(200, 0)}
	if got := laterOf(now, ahead); !got.Equal(ahead) {
		t.Errorf("got %v", got)
	}
	if got := laterOf(now, nil); !got.Equal(&now) {
		t.Errorf("got %v", got)
	}
}
