// Package estimate answers the estimator's capacity questions — how many
// replicas, or how many complete sets of components, fit in the member
// cluster — with pure functions over the nodes' allocatable and requested
// resources and the namespace's ResourceQuotas. The estimator's cache keeps
// those up to date; nothing here reads the API.
package estimate

import (
	corev1 "k8s.io/api/core/v1"
)

// Resources are amounts as integers: CPU in millicores, pods as a count,
// every other resource in its base unit (bytes, devices). The resources every
// node and most pods name are fields, so that the per-node arithmetic of an
// answer does not look anything up in a map.
type Resources struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	Pods             int64
	// Scalar holds the other resources: huge pages, extended resources.
	Scalar map[corev1.ResourceName]int64
}

// FromList converts a ResourceList. Quantities that are not whole in their
// unit are rounded up, as the scheduler rounds requests.
func FromList(l corev1.ResourceList) Resources {
	var r Resources
	for name, q := range l {
		if name == corev1.ResourceCPU {
			r.MilliCPU = q.MilliValue()
			continue
		}
		r.set(name, q.Value())
	}
	return r
}

// amount converts one quantity of name to the unit Resources keeps it in.
func amount(name corev1.ResourceName, l corev1.ResourceList) int64 {
	q, ok := l[name]
	if !ok {
		return 0
	}
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Get returns the amount of name.
func (r *Resources) Get(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case corev1.ResourcePods:
		return r.Pods
	}
	return r.Scalar[name]
}

func (r *Resources) set(name corev1.ResourceName, v int64) {
	switch name {
	case corev1.ResourceCPU:
		r.MilliCPU = v
	case corev1.ResourceMemory:
		r.Memory = v
	case corev1.ResourceEphemeralStorage:
		r.EphemeralStorage = v
	case corev1.ResourcePods:
		r.Pods = v
	default:
		if r.Scalar == nil {
			r.Scalar = map[corev1.ResourceName]int64{}
		}
		r.Scalar[name] = v
	}
}

// Add adds o to r.
func (r *Resources) Add(o Resources) { r.addScaled(o, 1) }

// Sub takes o from r. Scalars that come to zero are dropped, so that a node
// whose pods all went holds no leftover entries.
func (r *Resources) Sub(o Resources) { r.addScaled(o, -1) }

func (r *Resources) addScaled(o Resources, sign int64) {
	r.MilliCPU += sign * o.MilliCPU
	r.Memory += sign * o.Memory
	r.EphemeralStorage += sign * o.EphemeralStorage
	r.Pods += sign * o.Pods
	for name, v := range o.Scalar {
		sum := r.Scalar[name] + sign*v
		if sum == 0 {
			delete(r.Scalar, name)
			continue
		}
		r.set(name, sum)
	}
}

// IsZero reports whether r holds nothing.
func (r *Resources) IsZero() bool {
	return r.MilliCPU == 0 && r.Memory == 0 && r.EphemeralStorage == 0 && r.Pods == 0 && len(r.Scalar) == 0
}

// Equal reports whether r and o hold the same amounts.
func (r *Resources) Equal(o Resources) bool {
	if r.MilliCPU != o.MilliCPU || r.Memory != o.Memory || r.EphemeralStorage != o.EphemeralStorage || r.Pods != o.Pods || len(r.Scalar) != len(o.Scalar) {
		return false
	}
	for name, v := range r.Scalar {
		if w, ok := o.Scalar[name]; !ok || w != v {
			return false
		}
	}
	return true
}

// Node is one node of the member as an answer sees it.
type Node struct {
	// Node holds what node claims are matched against: the name, labels,
	// taints and spec.unschedulable.
	Node        *corev1.Node
	Allocatable Resources
	// Requested is the sum of the requests of the non-terminal pods bound
	// to the node; Requested.Pods is how many there are.
	Requested Resources
}

// free is what is left of name on n; negative when the node is
// overcommitted (allocatable shrank under running pods).
func (n *Node) free(name corev1.ResourceName) int64 {
	return n.Allocatable.Get(name) - n.Requested.Get(name)
}
