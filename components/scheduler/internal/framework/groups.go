package framework

import "context"

// GroupKind says which of a binding's workload groups a lookup is about.
type GroupKind int

// Group kinds: spec.workloadAffinityGroups.affinityGroup and
// antiAffinityGroup.
const (
	AffinityGroup GroupKind = iota
	AntiAffinityGroup
)

func (k GroupKind) String() string {
	if k == AntiAffinityGroup {
		return "anti-affinity"
	}
	return "affinity"
}

// GroupMember is a binding of a workload group as the scheduler knows it
// at its newest: the informer's copy, or this scheduler's own decision when
// that is newer than what the informer has delivered so far.
type GroupMember struct {
	// Name is the binding's name.
	Name string
	// Clusters are the names in its spec.clusters; empty when it is not
	// scheduled.
	Clusters []string
}

// WorkloadGroups finds the bindings of a workload group. Only
// ResourceBindings belong to groups, and a group never spans namespaces,
// as in Karmada.
type WorkloadGroups interface {
	// Members returns the ResourceBindings of namespace whose group of
	// the kind is group, the binding being scheduled included.
	Members(ctx context.Context, kind GroupKind, namespace, group string) ([]GroupMember, error)
}
