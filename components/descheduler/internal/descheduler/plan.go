package descheduler

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// readyUnknown marks a cluster whose status has not reported ready
// replicas yet; it counts as not having reached its share.
const readyUnknown int32 = -1

// Eligible reports whether the descheduler looks at rb, as Karmada's does:
// a Deployment (the estimators count unschedulable pods of Deployments)
// whose placement in force — the applied-placement annotation the
// scheduler wrote, not a spec edited since — divides replicas by dynamic
// weights. Static weights and aggregation say where replicas go whatever
// the clusters can hold; moving them would fight the user.
func Eligible(rb *workv1alpha2.ResourceBinding) bool {
	if rb.DeletionTimestamp != nil {
		return false
	}
	if schema.FromAPIVersionAndKind(rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind) != appsv1.SchemeGroupVersion.WithKind("Deployment") {
		return false
	}
	applied, ok := rb.Annotations[policyv1alpha1.AppliedPlacementAnnotation]
	if !ok {
		return false
	}
	var p policyv1alpha1.Placement
	if err := json.Unmarshal([]byte(applied), &p); err != nil {
		return false
	}
	rs := p.ReplicaScheduling
	return rs != nil && rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided &&
		rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceWeighted &&
		rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != ""
}

// Target is one cluster of a binding's schedule as the descheduler sees it.
type Target struct {
	Name string
	// Spec is the replicas scheduled there.
	Spec int32
	// Ready is the ready replicas the member reports, readyUnknown if none.
	Ready int32
	// Unschedulable is the replicas the estimators report as unschedulable
	// for longer than the threshold.
	Unschedulable int32
}

// Targets pairs spec.clusters with the ready replicas of status.aggregatedStatus.
func Targets(rb *workv1alpha2.ResourceBinding) []Target {
	ready := make(map[string]int32, len(rb.Status.AggregatedStatus))
	for _, item := range rb.Status.AggregatedStatus {
		if item.Status == nil {
			continue
		}
		var s struct {
			ReadyReplicas *int32 `json:"readyReplicas"`
		}
		if err := json.Unmarshal(item.Status.Raw, &s); err != nil || s.ReadyReplicas == nil {
			continue
		}
		ready[item.ClusterName] = *s.ReadyReplicas
	}
	targets := make([]Target, len(rb.Spec.Clusters))
	for i, tc := range rb.Spec.Clusters {
		targets[i] = Target{Name: tc.Name, Spec: tc.Replicas, Ready: readyUnknown}
		if r, ok := ready[tc.Name]; ok {
			targets[i].Ready = r
		}
	}
	return targets
}

// Lagging are the targets whose ready replicas fall short of their share:
// only their estimators are asked.
func Lagging(targets []Target) []int {
	var idx []int
	for i, t := range targets {
		if t.Ready < t.Spec {
			idx = append(idx, i)
		}
	}
	return idx
}

// Plan takes the unschedulable replicas off each target, never below the
// replicas ready there, and returns the new spec.clusters, how many
// replicas it took, and the event message; nil clusters when nothing
// moves. The scheduler then sees replicas missing from the schedule and
// places them where the estimators say they fit.
func Plan(clusters []workv1alpha2.TargetCluster, targets []Target) ([]workv1alpha2.TargetCluster, int32, string) {
	out := make([]workv1alpha2.TargetCluster, len(clusters))
	copy(out, clusters)
	var total int32
	var per []string
	for i, t := range targets {
		if t.Unschedulable <= 0 || t.Unschedulable > t.Spec {
			continue
		}
		keep := t.Spec - t.Unschedulable
		if t.Ready > keep && t.Ready <= t.Spec {
			keep = t.Ready
		}
		moved := t.Spec - keep
		if moved == 0 {
			continue
		}
		out[i].Replicas = keep
		total += moved
		per = append(per, fmt.Sprintf("%d replica(s) in cluster(%s)", moved, t.Name))
	}
	if total == 0 {
		return nil, 0, ""
	}
	return out, total, fmt.Sprintf("Binding has been descheduled, %d total descheduled replica(s): %s", total, strings.Join(per, ", "))
}
