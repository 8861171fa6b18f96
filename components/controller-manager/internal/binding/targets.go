package binding

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// target is one cluster that gets a Work, and the counts its manifest gets.
type target struct {
	cluster string
	// replicas, when set, replaces the template's own count (ReviseReplica).
	replicas *int64
	// completions, when set, is the cluster's share of a Job's completions.
	completions *int64
	// suspend holds the Work back from the member.
	suspend bool
	// labels are added to the manifest: the state a failover preserved.
	labels map[string]string
}

// targetsFor decides which clusters get a Work and with which counts:
// spec.clusters, then the clusters of the bindings that require this one
// (their dependencies follow them). When the binding has replicas and the
// interpreter can revise them (reviseEnabled), every cluster gets its
// scheduled count, whatever the template says: Duplicated schedules give
// each cluster spec.replicas, Divided ones a share. A divided Job's
// completions are split in proportion to the clusters' replicas, so that
// the members together complete exactly what the template asks.
func targetsFor(spec *workv1alpha2.ResourceBindingSpec, template *unstructured.Unstructured, reviseEnabled bool) []target {
	clusters := mergeRequiredBy(spec.Clusters, spec.RequiredBy)
	if len(clusters) == 0 {
		return nil
	}
	revise := reviseEnabled && spec.Replicas > 0
	var completions map[string]int64
	if revise && isJob(template) && divided(spec.Placement) {
		if total, ok := nestedCount(template.Object, "spec", "completions"); ok {
			completions = divideByWeight(total, clusters)
		}
	}
	out := make([]target, len(clusters))
	for i, c := range clusters {
		t := target{cluster: c.Name, suspend: suspended(spec.Suspension, c.Name)}
		if revise {
			t.replicas = ptr.To(int64(c.Replicas))
		}
		if n, ok := completions[c.Name]; ok {
			t.completions = ptr.To(n)
		}
		out[i] = t
	}
	return out
}

// mergeRequiredBy appends the clusters of requiring bindings that are not
// scheduled already, as Karmada does.
func mergeRequiredBy(clusters []workv1alpha2.TargetCluster, requiredBy []workv1alpha2.BindingSnapshot) []workv1alpha2.TargetCluster {
	if len(requiredBy) == 0 {
		return clusters
	}
	seen := make(map[string]bool, len(clusters))
	out := slices.Clone(clusters)
	for _, c := range clusters {
		seen[c.Name] = true
	}
	for _, r := range requiredBy {
		for _, c := range r.Clusters {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// nestedCount reads a whole number, however it was decoded.
func nestedCount(obj map[string]any, fields ...string) (int64, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

func isJob(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "batch" && gvk.Kind == "Job"
}

// divided mirrors the scheduler: no replicaScheduling means Duplicated; an
// empty type means Divided, the schema default.
func divided(p *policyv1alpha1.Placement) bool {
	if p == nil || p.ReplicaScheduling == nil {
		return false
	}
	return p.ReplicaScheduling.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDuplicated
}

// divideByWeight splits total among the clusters in proportion to their
// replicas, largest remainders first (ties: more replicas, then name), so the
// shares add up to total exactly. With no replicas anywhere every share is 0.
func divideByWeight(total int64, clusters []workv1alpha2.TargetCluster) map[string]int64 {
	out := make(map[string]int64, len(clusters))
	var sum int64
	for _, c := range clusters {
		sum += int64(c.Replicas)
		out[c.Name] = 0
	}
	if sum == 0 || total <= 0 {
		return out
	}
	type share struct {
		name      string
		weight    int64
		remainder int64
	}
	shares := make([]share, 0, len(clusters))
	left := total
	for _, c := range clusters {
		w := int64(c.Replicas)
		out[c.Name] = total * w / sum
		left -= out[c.Name]
		shares = append(shares, share{name: c.Name, weight: w, remainder: total * w % sum})
	}
	slices.SortFunc(shares, func(a, b share) int {
		return cmp.Or(cmp.Compare(b.remainder, a.remainder), cmp.Compare(b.weight, a.weight), cmp.Compare(a.name, b.name))
	})
	for i := 0; left > 0 && len(shares) > 0; i = (i + 1) % len(shares) {
		if shares[i].weight == 0 {
			continue
		}
		out[shares[i].name]++
		left--
	}
	return out
}

// suspended tells whether dispatching to cluster is suspended.
func suspended(s *workv1alpha2.Suspension, cluster string) bool {
	if s == nil {
		return false
	}
	if ptr.Deref(s.Dispatching, false) {
		return true
	}
	return s.DispatchingOnClusters != nil && slices.Contains(s.DispatchingOnClusters.ClusterNames, cluster)
}

// conflictResolution is the value of the manifest's conflict-resolution
// annotation: the template's own annotation when it is valid, else the
// binding's spec.conflictResolution, Abort by default.
func conflictResolution(manifestAnnotations map[string]string, fromBinding policyv1alpha1.ConflictResolution) string {
	switch v := manifestAnnotations[workv1alpha1.ConflictResolutionAnnotation]; v {
	case workv1alpha1.ConflictResolutionOverwrite, workv1alpha1.ConflictResolutionAbort:
		return v
	}
	if fromBinding == policyv1alpha1.ConflictOverwrite {
		return workv1alpha1.ConflictResolutionOverwrite
	}
	return workv1alpha1.ConflictResolutionAbort
}

// preservedState is the state a failover preserved that the workload's
// copy in cluster carries as labels. As in Karmada, only a workload that
// moved whole, from the clusters it ran on to exactly one other, gets it:
// from the last eviction, when it purged the old copy Directly and
// recorded a state.
func preservedState(spec *workv1alpha2.ResourceBindingSpec, cluster string) map[string]string {
	if len(spec.Clusters) != 1 || len(spec.GracefulEvictionTasks) == 0 {
		return nil
	}
	last := spec.GracefulEvictionTasks[len(spec.GracefulEvictionTasks)-1]
	if last.PurgeMode != policyv1alpha1.PurgeModeDirectly || slices.Contains(last.ClustersBeforeFailover, cluster) {
		return nil
	}
	return last.PreservedLabelState
}
