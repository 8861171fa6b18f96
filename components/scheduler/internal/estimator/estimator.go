// Package estimator answers how many more replicas of a workload a member
// cluster can hold. The general estimator works from what the Cluster object
// reports (status.resourceSummary, spec.resourceModels); more accurate
// estimators (for example one asking an agent inside the member) plug in
// through the Estimator interface, and the scheduler takes the smallest answer.
package estimator

import (
	"context"
	"math"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Unknown is an estimator's answer when it has no opinion about a cluster;
// the scheduler then relies on the other estimators.
const Unknown int32 = -1

// Estimator estimates, for each target, how many more replicas described by
// req fit, writing the answers into out (len(out) == len(targets)). An
// answer of Unknown leaves the decision to the other estimators.
type Estimator interface {
	MaxAvailableReplicas(ctx context.Context, targets []*Target, req *Requirements, out []int32) error
}

// Target is a cluster as estimators see it. It is built once per Cluster
// update, so estimating a binding costs a few lookups per cluster instead of
// parsing quantities every scheduling cycle.
type Target struct {
	// Cluster is the object the target was built from; read only.
	Cluster *clusterv1alpha1.Cluster

	// hasSummary is false when the cluster reported no resourceSummary or no
	// pod capacity: nothing can be placed there by estimate.
	hasSummary bool
	// freePods is allocatable pods minus allocated and allocating pods.
	freePods int64
	// free is allocatable minus allocated minus allocating, in milli-units.
	free map[corev1.ResourceName]int64

	// modelResources name the resources of spec.resourceModels, in order.
	modelResources []corev1.ResourceName
	// grades are the resource-model grades that hold at least one node.
	grades []grade
}

// grade is one resource-model grade: how many nodes have free capacity in
// it, and the lower bound of that capacity per model resource (milli-units,
// aligned with Target.modelResources).
type grade struct {
	nodes int64
	min   []int64
}

// Name is the cluster's name.
func (t *Target) Name() string { return t.Cluster.Name }

// NewTarget precomputes what estimation needs from a Cluster.
func NewTarget(c *clusterv1alpha1.Cluster) *Target {
	t := &Target{Cluster: c}
	summary := c.Status.ResourceSummary
	if summary == nil {
		return t
	}
	allocatablePods, ok := summary.Allocatable[corev1.ResourcePods]
	if !ok {
		// Without a pod capacity the member's numbers are not trustworthy;
		// Karmada counts such a cluster as full, and so do we.
		return t
	}
	t.hasSummary = true
	t.freePods = allocatablePods.Value() - quantityValue(summary.Allocated, corev1.ResourcePods) - quantityValue(summary.Allocating, corev1.ResourcePods)
	t.free = make(map[corev1.ResourceName]int64, len(summary.Allocatable))
	for name, q := range summary.Allocatable {
		if name == corev1.ResourcePods {
			continue
		}
		t.free[name] = q.MilliValue() - quantityMilli(summary.Allocated, name) - quantityMilli(summary.Allocating, name)
	}
	t.grades, t.modelResources = buildGrades(c.Spec.ResourceModels, summary.AllocatableModelings)
	return t
}

// buildGrades keeps the grades that hold nodes, with the lower bounds of
// their ranges. Models are ignored unless every model names the same
// resources in the same order, as the API requires.
func buildGrades(models []clusterv1alpha1.ResourceModel, counts []clusterv1alpha1.AllocatableModeling) ([]grade, []corev1.ResourceName) {
	if len(models) == 0 || len(counts) == 0 {
		return nil, nil
	}
	names := make([]corev1.ResourceName, len(models[0].Ranges))
	for i, r := range models[0].Ranges {
		names[i] = r.Name
	}
	nodes := make(map[uint]int64, len(counts))
	for _, c := range counts {
		nodes[c.Grade] += int64(c.Count)
	}
	var grades []grade
	for _, m := range models {
		if len(m.Ranges) != len(names) {
			return nil, nil
		}
		n := nodes[m.Grade]
		if n <= 0 {
			continue
		}
		g := grade{nodes: n, min: make([]int64, len(names))}
		for i, r := range m.Ranges {
			if r.Name != names[i] {
				return nil, nil
			}
			g.min[i] = r.Min.MilliValue()
		}
		grades = append(grades, g)
	}
	return grades, names
}

func quantityValue(list corev1.ResourceList, name corev1.ResourceName) int64 {
	if q, ok := list[name]; ok {
		return q.Value()
	}
	return 0
}

func quantityMilli(list corev1.ResourceList, name corev1.ResourceName) int64 {
	if q, ok := list[name]; ok {
		return q.MilliValue()
	}
	return 0
}

// Requirements is what one unit needs: one replica, or one complete set of a
// multi-component workload. Built once per scheduling cycle.
type Requirements struct {
	// Replica is the binding's own description, for accurate estimators
	// that look at node claims; nil for component sets.
	Replica *workv1alpha2.ReplicaRequirements
	// Components is the multi-component description, for accurate
	// estimators; nil for single-component workloads.
	Components []workv1alpha2.Component
	// Namespace is the workload's, for estimators that check the
	// member's quotas of component sets.
	Namespace string

	// pods is the number of pods in one unit.
	pods int64
	// resources lists the non-zero requests of one unit, in milli-units.
	resources []amount
	// perNode is false for component sets, whose pods spread over nodes, so
	// per-node resource models do not apply.
	perNode bool
}

type amount struct {
	name  corev1.ResourceName
	milli int64
}

// ForReplica describes one replica of a single-component workload.
func ForReplica(rr *workv1alpha2.ReplicaRequirements) *Requirements {
	req := &Requirements{Replica: rr, pods: 1, perNode: true}
	if rr != nil {
		req.resources = amounts(rr.ResourceRequest, 1, nil)
	}
	return req
}

// ForComponentSet describes one complete set of a multi-component workload:
// every component with all of its replicas.
func ForComponentSet(components []workv1alpha2.Component) *Requirements {
	req := &Requirements{Components: components}
	total := map[corev1.ResourceName]int64{}
	for _, c := range components {
		req.pods += int64(c.Replicas)
		if c.ReplicaRequirements == nil {
			continue
		}
		for name, q := range c.ReplicaRequirements.ResourceRequest {
			if name == corev1.ResourcePods {
				continue
			}
			total[name] += q.MilliValue() * int64(c.Replicas)
		}
	}
	for name, milli := range total {
		if milli > 0 {
			req.resources = append(req.resources, amount{name: name, milli: milli})
		}
	}
	return req
}

func amounts(list corev1.ResourceList, times int64, out []amount) []amount {
	for name, q := range list {
		if name == corev1.ResourcePods {
			continue
		}
		if m := q.MilliValue() * times; m > 0 {
			out = append(out, amount{name: name, milli: m})
		}
	}
	return out
}

// General is the estimator every scheduler has: it divides what the
// cluster reports as free by what one unit requests.
type General struct{}

var _ Estimator = General{}

// MaxAvailableReplicas implements Estimator.
func (General) MaxAvailableReplicas(_ context.Context, targets []*Target, req *Requirements, out []int32) error {
	for i, t := range targets {
		out[i] = Estimate(t, req)
	}
	return nil
}

// Estimate is the general estimate for one target: the fewest units allowed
// by the pod count, by each requested resource, and, when the cluster
// describes its nodes with resource models, by the nodes of each grade.
func Estimate(t *Target, req *Requirements) int32 {
	if !t.hasSummary {
		return 0
	}
	limit := int64(math.MaxInt32)
	if req.pods > 0 {
		limit = max(t.freePods, 0) / req.pods
	}
	for _, a := range req.resources {
		free := t.free[a.name]
		if n := max(free, 0) / a.milli; n < limit {
			limit = n
		}
	}
	if req.perNode && len(t.grades) > 0 && len(req.resources) > 0 {
		if n, ok := byModels(t, req); ok && n < limit {
			limit = n
		}
	}
	return int32(min(limit, math.MaxInt32))
}

// byModels counts replicas node grade by grade: a node of a grade has at
// least the grade's lower bound free, so it holds at least that many
// replicas. It does not apply when a requested resource has no model.
func byModels(t *Target, req *Requirements) (int64, bool) {
	idx := make([]int, len(req.resources))
	for i, a := range req.resources {
		idx[i] = -1
		for j, name := range t.modelResources {
			if name == a.name {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return 0, false
		}
	}
	var total int64
	for _, g := range t.grades {
		perNode := int64(math.MaxInt64)
		for i, a := range req.resources {
			perNode = min(perNode, g.min[idx[i]]/a.milli)
		}
		if perNode <= 0 {
			continue
		}
		if perNode > math.MaxInt32 || g.nodes > math.MaxInt32 {
			return math.MaxInt32, true
		}
		total += perNode * g.nodes
		if total >= math.MaxInt32 {
			return math.MaxInt32, true
		}
	}
	return total, true
}
