package scheduler

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/queue"
)

// Binding is a ResourceBinding or a ClusterResourceBinding seen through
// what they share.
type Binding struct {
	Object client.Object
	Spec   *workv1alpha2.ResourceBindingSpec
	Status *workv1alpha2.ResourceBindingStatus
}

// AsBinding views obj as a binding; ok is false for other types.
func AsBinding(obj any) (Binding, bool) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return Binding{Object: b, Spec: &b.Spec, Status: &b.Status}, true
	case *workv1alpha2.ClusterResourceBinding:
		return Binding{Object: b, Spec: &b.Spec, Status: &b.Status}, true
	}
	return Binding{}, false
}

// Key is the binding's queue key.
func (b Binding) Key() queue.Key {
	return queue.Key{Namespace: b.Object.GetNamespace(), Name: b.Object.GetName()}
}

// Priority is spec.schedulePriority.priority, 0 when unset.
func (b Binding) Priority() int32 {
	if p := b.Spec.SchedulePriority; p != nil {
		return p.Priority
	}
	return 0
}

// SchedulerName is spec.schedulerName with the default applied.
func (b Binding) SchedulerName() string {
	if b.Spec.SchedulerName == "" {
		return policyv1alpha1.DefaultSchedulerName
	}
	return b.Spec.SchedulerName
}

// Action is what a binding needs from the scheduler.
type Action int

// Actions.
const (
	// Nothing: the binding is scheduled for its current spec.
	Nothing Action = iota
	// ObserveGeneration: the spec changed in a way that does not affect
	// placement; only status.schedulerObservedGeneration moves, so other
	// controllers know the schedule is current.
	ObserveGeneration
	// Schedule: run the algorithm.
	Schedule
)

// Trigger is the verdict of Evaluate.
type Trigger struct {
	Action Action
	// Fresh asks for a rebalance rather than a steady reschedule.
	Fresh bool
	// Reason says why, for logs.
	Reason string
}

// Evaluate decides from the binding alone (and which clusters exist)
// whether it must be scheduled. This is the only gate: an unchanged binding
// keeps its placement and causes no write, whatever happens to clusters,
// except that losing a target cluster reschedules it.
func Evaluate(b Binding, clusterExists func(string) bool) Trigger {
	spec, status := b.Spec, b.Status
	switch {
	case b.Object.GetDeletionTimestamp() != nil:
		return Trigger{Reason: "binding is being deleted"}
	case spec.Suspension != nil && spec.Suspension.Scheduling != nil && *spec.Suspension.Scheduling:
		return Trigger{Reason: "scheduling is suspended"}
	case spec.Placement == nil:
		return Trigger{Reason: "binding has no placement"}
	}
	if t := spec.RescheduleTriggeredAt; t != nil && (status.LastScheduledTime == nil || t.After(status.LastScheduledTime.Time)) {
		return Trigger{Action: Schedule, Fresh: true, Reason: "rescheduling was requested"}
	}
	applied, ok := b.Object.GetAnnotations()[policyv1alpha1.AppliedPlacementAnnotation]
	if !ok {
		return Trigger{Action: Schedule, Reason: "binding was never scheduled"}
	}
	if !placementApplied(spec.Placement, applied) {
		return Trigger{Action: Schedule, Reason: "placement changed"}
	}
	if !replicasMatch(spec) {
		return Trigger{Action: Schedule, Reason: "replicas changed"}
	}
	for _, tc := range spec.Clusters {
		if !clusterExists(tc.Name) {
			return Trigger{Action: Schedule, Reason: fmt.Sprintf("target cluster %s was deleted", tc.Name)}
		}
	}
	if !meta.IsStatusConditionTrue(status.Conditions, workv1alpha2.Scheduled) {
		// The last attempt failed, or its status write did not land.
		return Trigger{Action: Schedule, Reason: "binding is not scheduled"}
	}
	if b.Object.GetGeneration() != status.SchedulerObservedGeneration {
		return Trigger{Action: ObserveGeneration, Reason: "generation changed"}
	}
	return Trigger{Reason: "binding is scheduled"}
}

// Refit reports whether a scheduled binding should be placed again when the
// set of clusters that fit may have grown (a cluster joined, became ready,
// lost a taint, gained an API): as in Karmada, a Duplicated binding, or one
// without replicas (a ConfigMap, a Role, ...), belongs on every cluster that
// fits, so it follows cluster changes. Divided bindings keep their replicas
// where they are: moving them is a rebalance, which only a user asks for.
func Refit(b Binding) bool {
	spec := b.Spec
	if b.Object.GetDeletionTimestamp() != nil || spec.Placement == nil ||
		(spec.Suspension != nil && spec.Suspension.Scheduling != nil && *spec.Suspension.Scheduling) {
		return false
	}
	if !meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha2.Scheduled) {
		// Not scheduled yet, or failed: Evaluate already schedules it.
		return false
	}
	if core.StrategyOf(spec.Placement) == core.Duplicated {
		return true
	}
	return spec.Replicas == 0 && len(spec.Components) == 0
}

// placementApplied compares the placement with the annotation: byte
// equality in the common case, semantic equality when another writer
// formatted the JSON differently.
func placementApplied(p *policyv1alpha1.Placement, applied string) bool {
	raw, err := json.Marshal(p)
	if err != nil {
		return false
	}
	if string(raw) == applied {
		return true
	}
	var old policyv1alpha1.Placement
	if err := json.Unmarshal([]byte(applied), &old); err != nil {
		return false
	}
	return equality.Semantic.DeepEqual(&old, p)
}

// replicasMatch reports whether spec.clusters still adds up to the desired
// replicas: each cluster has all of them when Duplicated, they sum up when
// Divided, and per component the same for multi-component workloads.
func replicasMatch(spec *workv1alpha2.ResourceBindingSpec) bool {
	duplicated := core.StrategyOf(spec.Placement) == core.Duplicated
	if len(spec.Components) > 0 {
		if len(spec.Clusters) == 0 {
			return false
		}
		for _, c := range spec.Components {
			var sum int32
			for _, tc := range spec.Clusters {
				got := componentReplicas(tc, c.Name)
				if duplicated && got != c.Replicas {
					return false
				}
				sum += got
			}
			if !duplicated && sum != c.Replicas {
				return false
			}
		}
		return true
	}
	var sum int32
	for _, tc := range spec.Clusters {
		if duplicated && tc.Replicas != spec.Replicas {
			return false
		}
		sum += tc.Replicas
	}
	return duplicated || sum == spec.Replicas
}

func componentReplicas(tc workv1alpha2.TargetCluster, name string) int32 {
	for _, c := range tc.Components {
		if c.Name == name {
			return c.Replicas
		}
	}
	return 0
}

// laterOf returns the later time, so lastScheduledTime never lags a
// rescheduleTriggeredAt stamped by a clock running ahead (which would
// re-trigger the rebalance forever).
func laterOf(now metav1.Time, t *metav1.Time) metav1.Time {
	if t != nil && t.After(now.Time) {
		return *t
	}
	return now
}
