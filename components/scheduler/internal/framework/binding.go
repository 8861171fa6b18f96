package framework

import (
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/internal/affinity"
)

// BindingInfo is the binding being scheduled, with what plugins look up for
// every cluster computed once per cycle. Plugins treat it as read only.
type BindingInfo struct {
	// Spec is the binding's spec; read only.
	Spec *workv1alpha2.ResourceBindingSpec
	// Placement is Spec.Placement, or an empty placement when absent.
	Placement *policyv1alpha1.Placement
	// APIKey identifies the template's kind for cache.ClusterInfo.ServesAPI.
	APIKey string
	// Tiers is the cluster affinity being tried: the primary affinity
	// first, then its overflow affinities. A nil entry matches every
	// cluster; no entries means no affinity at all.
	Tiers []*affinity.Matcher
	// Namespace and Name identify the binding; Namespace is empty for a
	// ClusterResourceBinding. Plugins that look at other bindings use them
	// to leave this one out.
	Namespace, Name string

	current  map[string]int32
	evicting map[string]struct{}
	// state is what PreFilter plugins computed for this cycle, by plugin.
	state map[string]any
}

// NewBindingInfo prepares a binding spec for a scheduling cycle. Tiers is
// left for the caller, which tries the placement's affinity terms in turn.
func NewBindingInfo(spec *workv1alpha2.ResourceBindingSpec) *BindingInfo {
	b := &BindingInfo{
		Spec:      spec,
		Placement: spec.Placement,
		APIKey:    cache.APIKey(spec.Resource.APIVersion, spec.Resource.Kind),
	}
	if b.Placement == nil {
		b.Placement = &policyv1alpha1.Placement{}
	}
	if len(spec.Clusters) > 0 {
		b.current = make(map[string]int32, len(spec.Clusters))
		for _, tc := range spec.Clusters {
			b.current[tc.Name] += tc.Replicas
		}
	}
	if len(spec.GracefulEvictionTasks) > 0 {
		b.evicting = make(map[string]struct{}, len(spec.GracefulEvictionTasks))
		for _, t := range spec.GracefulEvictionTasks {
			b.evicting[t.FromCluster] = struct{}{}
		}
	}
	return b
}

// Current returns the replicas the current schedule gives the cluster and
// whether the cluster is part of it at all.
func (b *BindingInfo) Current(cluster string) (int32, bool) {
	r, ok := b.current[cluster]
	return r, ok
}

// IsCurrent reports whether the cluster is in the current schedule.
func (b *BindingInfo) IsCurrent(cluster string) bool {
	_, ok := b.current[cluster]
	return ok
}

// Evicting reports whether the binding is being evicted from the cluster.
func (b *BindingInfo) Evicting(cluster string) bool {
	_, ok := b.evicting[cluster]
	return ok
}

// Tier returns the index of the first affinity tier the cluster matches,
// or -1 when it matches none.
func (b *BindingInfo) Tier(c *clusterv1alpha1.Cluster) int {
	if len(b.Tiers) == 0 {
		return 0
	}
	for i, m := range b.Tiers {
		if m.Matches(c) {
			return i
		}
	}
	return -1
}

// WriteState keeps a PreFilter plugin's result for the rest of the cycle,
// under the plugin's name.
func (b *BindingInfo) WriteState(key string, v any) {
	if b.state == nil {
		b.state = make(map[string]any, 2)
	}
	b.state[key] = v
}

// ReadState returns what WriteState kept under key.
func (b *BindingInfo) ReadState(key string) (any, bool) {
	v, ok := b.state[key]
	return v, ok
}
