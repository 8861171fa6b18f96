package scheduler

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/queue"
	"github.com/flotilla-io/flotilla/internal/affinity"
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

// TargetState is what Evaluate needs to know of a cluster in spec.clusters.
type TargetState int

// Target states.
const (
	// TargetPresent: the cluster exists and is not being deleted.
	TargetPresent TargetState = iota
	// TargetDeleting: the cluster has a deletionTimestamp.
	TargetDeleting
	// TargetGone: the cluster does not exist.
	TargetGone
)

// Evaluate decides from the binding alone (and the state of its target
// clusters) whether it must be scheduled. An unchanged binding keeps its
// placement and causes no write, except that a target cluster being
// deleted, or gone, reschedules it. The other cluster changes go through
// Refit and AffectedBy.
func Evaluate(b Binding, target func(string) TargetState) Trigger {
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
	if evictedSinceScheduled(spec, status) {
		// A Divided binding's evicted replicas show as missing above; a
		// Duplicated one loses a cluster without any, and may have
		// somewhere else to go (spread constraints), as Karmada
		// reschedules Duplicated bindings on every spec change.
		return Trigger{Action: Schedule, Reason: "a target cluster was evicted"}
	}
	for _, tc := range spec.Clusters {
		switch target(tc.Name) {
		case TargetGone:
			return Trigger{Action: Schedule, Reason: fmt.Sprintf("target cluster %s was deleted", tc.Name)}
		case TargetDeleting:
			// Karmada reschedules as soon as the deletion starts, so the
			// replicas have somewhere to go before the cluster is gone.
			return Trigger{Action: Schedule, Reason: fmt.Sprintf("target cluster %s is being deleted", tc.Name)}
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

// Refit reports whether a scheduled binding is placed again when a cluster
// it may care about changes (see AffectedBy): as in Karmada, a Duplicated
// binding, or one without replicas (a ConfigMap, a Role, ...), belongs on
// every cluster that fits, so it follows cluster changes both ways — onto a
// cluster that starts to fit, off one that stops. Divided bindings keep
// their replicas where they are, as Karmada's do, until a target cluster is
// deleted (Evaluate): moving them is a rebalance, which only a user asks
// for.
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

// ClusterFitMayChange reports whether a cluster update may change where
// bindings belong. These are Karmada's triggers — the deletion started, the
// labels changed, the generation moved (spec: taints, provider, region,
// zones) — plus the API enablements, which the APIEnablement filter reads
// from the status. Heartbeats and resource summaries do not qualify.
func ClusterFitMayChange(o, n *clusterv1alpha1.Cluster) bool {
	if o.DeletionTimestamp == nil && n.DeletionTimestamp != nil {
		return true
	}
	if o.Generation != n.Generation || !maps.Equal(o.Labels, n.Labels) || !equality.Semantic.DeepEqual(o.Spec, n.Spec) {
		return true
	}
	if !equality.Semantic.DeepEqual(o.Status.APIEnablements, n.Status.APIEnablements) {
		return true
	}
	complete := func(c *clusterv1alpha1.Cluster) metav1.ConditionStatus {
		if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements); cond != nil {
			return cond.Status
		}
		return ""
	}
	return complete(o) != complete(n)
}

// ClusterChangeMayHelp reports whether a cluster update could make an
// unschedulable binding fit: anything the filters or estimators read.
func ClusterChangeMayHelp(o, n *clusterv1alpha1.Cluster) bool {
	return ClusterFitMayChange(o, n) || !equality.Semantic.DeepEqual(o.Status.ResourceSummary, n.Status.ResourceSummary)
}

// AffectedBy reports whether a change of cluster c (its states before and
// after, nil for one that did not exist) may move the binding. As in
// Karmada, it is when the cluster affinity in use — placement.clusterAffinity,
// or the clusterAffinities term the binding is scheduled with — is absent or
// matches the cluster before or after the change; a cluster the binding is
// on always qualifies. When the term in use may be stale (the status lags
// the generation), every change qualifies.
func AffectedBy(b Binding, before, after *clusterv1alpha1.Cluster) bool {
	p := b.Spec.Placement
	if p == nil {
		return false
	}
	for _, c := range []*clusterv1alpha1.Cluster{before, after} {
		if c != nil && slices.ContainsFunc(b.Spec.Clusters, func(tc workv1alpha2.TargetCluster) bool { return tc.Name == c.Name }) {
			return true
		}
	}
	a := p.ClusterAffinity
	if len(p.ClusterAffinities) > 0 {
		if b.Status.SchedulerObservedGeneration != b.Object.GetGeneration() {
			return true
		}
		a = &p.ClusterAffinities[termInUse(p.ClusterAffinities, b.Status.SchedulerObservedAffinityName)].ClusterAffinity
	}
	m, err := affinity.Compile(a)
	if err != nil {
		// The scheduling cycle reports the invalid selector.
		return true
	}
	return (before != nil && m.Matches(before)) || (after != nil && m.Matches(after))
}

// termInUse is the index of the clusterAffinities term named name, the
// first when none is.
func termInUse(terms []policyv1alpha1.ClusterAffinityTerm, name string) int {
	for i := range terms {
		if terms[i].AffinityName == name {
			return i
		}
	}
	return 0
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

// evictedSinceScheduled reports whether a graceful eviction task is newer
// than the last schedule (one without a creation time counts as new until
// the graceful eviction controller stamps it).
func evictedSinceScheduled(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	for _, t := range spec.GracefulEvictionTasks {
		if t.CreationTimestamp == nil || status.LastScheduledTime == nil || t.CreationTimestamp.After(status.LastScheduledTime.Time) {
			return true
		}
	}
	return false
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
