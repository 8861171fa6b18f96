package scheduler

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
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
	target := func(name string) TargetState {
		switch name {
		case "gone":
			return TargetGone
		case "deleting":
			return TargetDeleting
		}
		return TargetPresent
	}
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
		{"duplicated binding evicted from a cluster since it was scheduled", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Scheduled(fixture.T("a", 3)))
			created := metav1.NewTime(rb.Status.LastScheduledTime.Add(time.Minute))
			rb.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "b", Reason: "TaintUntolerated", Producer: "TaintManager", CreationTimestamp: &created}}
			return rb
		}, Schedule, false},
		{"eviction already scheduled around", func() *workv1alpha2.ResourceBinding {
			rb := scheduled(fixture.Binding("x").Replicas(3).Scheduled(fixture.T("a", 3)))
			created := metav1.NewTime(rb.Status.LastScheduledTime.Add(-time.Minute))
			rb.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "b", Reason: "TaintUntolerated", Producer: "TaintManager", CreationTimestamp: &created}}
			return rb
		}, Nothing, false},
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
		{"target cluster being deleted", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Replicas(3).Dynamic().Scheduled(fixture.T("a", 2), fixture.T("deleting", 1)))
		}, Schedule, false},
		{"another cluster being deleted", func() *workv1alpha2.ResourceBinding {
			return scheduled(fixture.Binding("x").Replicas(3).Aggregated().Scheduled(fixture.T("a", 3)))
		}, Nothing, false},
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
			got := Evaluate(b, target)
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

func TestClusterChangeTriggers(t *testing.T) {
	base := func() *clusterv1alpha1.Cluster {
		c := fixture.Cluster("a").Label("env", "prod").Region("eu").Pods(10).Obj()
		c.Generation = 1
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: metav1.Unix(1, 0)}}
		return c
	}
	tests := []struct {
		name              string
		change            func(c *clusterv1alpha1.Cluster)
		fitMayChange, may bool
	}{
		{"nothing", func(*clusterv1alpha1.Cluster) {}, false, false},
		{"heartbeat", func(c *clusterv1alpha1.Cluster) {
			c.ResourceVersion = "2"
			c.Status.Conditions[0].LastTransitionTime = metav1.Unix(2, 0)
		}, false, false},
		{"label changed", func(c *clusterv1alpha1.Cluster) { c.Labels["env"] = "dev" }, true, true},
		{"label added", func(c *clusterv1alpha1.Cluster) { c.Labels["team"] = "x" }, true, true},
		{"label removed", func(c *clusterv1alpha1.Cluster) { c.Labels = nil }, true, true},
		{"generation moved", func(c *clusterv1alpha1.Cluster) { c.Generation = 2 }, true, true},
		{"taint added", func(c *clusterv1alpha1.Cluster) {
			c.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
		}, true, true},
		{"region changed", func(c *clusterv1alpha1.Cluster) { c.Spec.Region = "us" }, true, true},
		{"deletion started", func(c *clusterv1alpha1.Cluster) { c.DeletionTimestamp = &metav1.Time{Time: time.Unix(5, 0)} }, true, true},
		{"API enablements changed", func(c *clusterv1alpha1.Cluster) { c.Status.APIEnablements = nil }, true, true},
		{"API enablements declared incomplete", func(c *clusterv1alpha1.Cluster) {
			c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionFalse})
		}, true, true},
		{"resource summary only", func(c *clusterv1alpha1.Cluster) {
			c.Status.ResourceSummary = fixture.Cluster("a").Pods(20).Obj().Status.ResourceSummary
		}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			n := o.DeepCopy()
			tc.change(n)
			if got := ClusterFitMayChange(o, n); got != tc.fitMayChange {
				t.Errorf("ClusterFitMayChange = %v, want %v", got, tc.fitMayChange)
			}
			if got := ClusterChangeMayHelp(o, n); got != tc.may {
				t.Errorf("ClusterChangeMayHelp = %v, want %v", got, tc.may)
			}
		})
	}
}

func TestAffectedBy(t *testing.T) {
	prod := &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	inRegion := &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: policyv1alpha1.RegionField, Operator: corev1.NodeSelectorOpIn, Values: []string{"eu"}},
	}}}
	labelled := fixture.Cluster("c").Label("env", "prod").Obj()
	unlabelled := fixture.Cluster("c").Obj()
	other := fixture.Cluster("c").Label("env", "dev").Obj()
	terms := func(rb *workv1alpha2.ResourceBinding) *workv1alpha2.ResourceBinding {
		rb.Spec.Placement.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"p"}}},
			{AffinityName: "backup", ClusterAffinity: *prod},
		}
		return rb
	}
	tests := []struct {
		name          string
		rb            *workv1alpha2.ResourceBinding
		before, after *clusterv1alpha1.Cluster
		want          bool
	}{
		{"no affinity: every cluster", scheduled(fixture.Binding("x").Replicas(1)), unlabelled, other, true},
		{"labels stop matching", scheduled(fixture.Binding("x").Replicas(1).Affinity(prod)), labelled, unlabelled, true},
		{"labels start matching", scheduled(fixture.Binding("x").Replicas(1).Affinity(prod)), unlabelled, labelled, true},
		{"matches neither before nor after", scheduled(fixture.Binding("x").Replicas(1).Affinity(prod)), unlabelled, other, false},
		{"a joining cluster that matches", scheduled(fixture.Binding("x").Replicas(1).Affinity(prod)), nil, labelled, true},
		{"a joining cluster that does not", scheduled(fixture.Binding("x").Replicas(1).Affinity(prod)), nil, other, false},
		{"field selector", scheduled(fixture.Binding("x").Replicas(1).Affinity(inRegion)),
			fixture.Cluster("c").Region("us").Obj(), fixture.Cluster("c").Region("eu").Obj(), true},
		{"a cluster the binding is on", scheduled(fixture.Binding("x").Replicas(1).Affinity(prod).Scheduled(fixture.T("c", 1))), other, other, true},
		{"names elsewhere", scheduled(fixture.Binding("x").Replicas(1).ClusterNames("a", "b")), labelled, unlabelled, false},
		{"term in use matches", func() *workv1alpha2.ResourceBinding {
			rb := terms(scheduled(fixture.Binding("x").Replicas(1)))
			rb.Status.SchedulerObservedAffinityName = "backup"
			return rb
		}(), unlabelled, labelled, true},
		{"only another term matches", func() *workv1alpha2.ResourceBinding {
			rb := terms(scheduled(fixture.Binding("x").Replicas(1)))
			rb.Status.SchedulerObservedAffinityName = "primary"
			return rb
		}(), unlabelled, labelled, false},
		{"no term observed: the first", terms(scheduled(fixture.Binding("x").Replicas(1))), unlabelled, labelled, false},
		{"term in use may be stale", func() *workv1alpha2.ResourceBinding {
			rb := terms(scheduled(fixture.Binding("x").Replicas(1)))
			rb.Status.SchedulerObservedAffinityName = "primary"
			rb.Generation++
			return rb
		}(), unlabelled, other, true},
		{"invalid selector left to the cycle", scheduled(fixture.Binding("x").Replicas(1).Affinity(&policyv1alpha1.ClusterAffinity{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}},
		})), unlabelled, other, true},
		{"no placement", scheduled(fixture.Binding("x").Placement(nil)), labelled, unlabelled, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := AsBinding(tc.rb)
			if got := AffectedBy(b, tc.before, tc.after); got != tc.want {
				t.Errorf("AffectedBy = %v, want %v", got, tc.want)
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
