package clusterstatus

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/podrequests"
)

// nodeSummary counts the nodes and those whose Ready condition is True.
func nodeSummary(nodes []*corev1.Node) *clusterv1alpha1.NodeSummary {
	s := &clusterv1alpha1.NodeSummary{TotalNum: int32(len(nodes))}
	for _, n := range nodes {
		if nodeReady(n) {
			s.ReadyNum++
		}
	}
	return s
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// resourceSummary sums, as Karmada does: allocatable over every node;
// allocated over the pods bound to a node that have not terminated (the
// scheduler counts them against the node); allocating over the pending pods
// not bound yet. A pod counts with its effective requests (podrequests.ForPod:
// sidecars, init containers, pod-level requests and overhead included). allocated and allocating always list cpu, memory,
// ephemeral-storage and the pod count, zero or not.
func resourceSummary(models []clusterv1alpha1.ResourceModel, nodes []*corev1.Node, pods []*corev1.Pod) *clusterv1alpha1.ResourceSummary {
	allocatable := corev1.ResourceList{}
	for _, n := range nodes {
		addTo(allocatable, n.Status.Allocatable)
	}
	allocated, allocating := baseList(), baseList()
	var allocatedPods, allocatingPods int64
	for _, p := range pods {
		switch {
		case occupiesNode(p):
			addTo(allocated, podrequests.ForPod(&p.Spec))
			allocatedPods++
		case p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending:
			addTo(allocating, podrequests.ForPod(&p.Spec))
			allocatingPods++
		}
	}
	allocated[corev1.ResourcePods] = *resource.NewQuantity(allocatedPods, resource.DecimalSI)
	allocating[corev1.ResourcePods] = *resource.NewQuantity(allocatingPods, resource.DecimalSI)
	return &clusterv1alpha1.ResourceSummary{
		Allocatable:          allocatable,
		Allocated:            allocated,
		Allocating:           allocating,
		AllocatableModelings: allocatableModelings(models, nodes, pods),
	}
}

// occupiesNode: bound to a node and not terminated; a Succeeded or Failed
// pod no longer holds its requests.
func occupiesNode(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func baseList() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(0, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(0, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(0, resource.BinarySI),
	}
}

// addTo adds add into sum.
func addTo(sum, add corev1.ResourceList) {
	for name, q := range add {
		if cur, ok := sum[name]; ok {
			cur.Add(q)
			sum[name] = cur
		} else {
			sum[name] = q.DeepCopy()
		}
	}
}

// allocatableModelings counts the nodes per grade of spec.resourceModels by
// their free capacity (allocatable minus what their pods request): a node
// is in the highest grade whose minimum every modelled resource reaches, and
// in none when it falls below the first grade. Every grade is listed, with
// zero when empty, as Karmada does.
func allocatableModelings(models []clusterv1alpha1.ResourceModel, nodes []*corev1.Node, pods []*corev1.Pod) []clusterv1alpha1.AllocatableModeling {
	if len(models) == 0 {
		return nil
	}
	used := map[string]corev1.ResourceList{}
	for _, p := range pods {
		if !occupiesNode(p) {
			continue
		}
		u := used[p.Spec.NodeName]
		if u == nil {
			u = corev1.ResourceList{}
			used[p.Spec.NodeName] = u
		}
		addTo(u, podrequests.ForPod(&p.Spec))
		addTo(u, corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)})
	}

	out := make([]clusterv1alpha1.AllocatableModeling, len(models))
	for i, m := range models {
		out[i].Grade = m.Grade
	}
	for _, n := range nodes {
		if g := gradeOf(models, free(n.Status.Allocatable, used[n.Name])); g >= 0 {
			out[g].Count++
		}
	}
	return out
}

// free is allocatable minus used, never below zero.
func free(allocatable, used corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range allocatable {
		f := q.DeepCopy()
		if u, ok := used[name]; ok {
			f.Sub(u)
		}
		if f.Sign() < 0 {
			f = *resource.NewQuantity(0, f.Format)
		}
		out[name] = f
	}
	return out
}

// gradeOf is the index of the highest model whose minimum every resource of
// the first model reaches, or -1. A resource the node lacks counts as zero.
func gradeOf(models []clusterv1alpha1.ResourceModel, available corev1.ResourceList) int {
	grade := len(models) - 1
	for _, r := range models[0].Ranges {
		have := available[r.Name]
		best := -1
		for i, m := range models {
			if rng, ok := rangeOf(m, r.Name); ok && have.Cmp(rng.Min) >= 0 {
				best = i
			}
		}
		grade = min(grade, best)
	}
	return grade
}

func rangeOf(m clusterv1alpha1.ResourceModel, name corev1.ResourceName) (clusterv1alpha1.ResourceModelRange, bool) {
	for _, r := range m.Ranges {
		if r.Name == name {
			return r, true
		}
	}
	return clusterv1alpha1.ResourceModelRange{}, false
}
