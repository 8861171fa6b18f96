// Package workloadaffinity keeps the workloads of one affinity group
// (spec.workloadAffinityGroups.affinityGroup) on the same clusters: a new
// placement may only use clusters that every scheduled binding of the group
// targets.
package workloadaffinity

import (
	"context"
	"fmt"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Name of the plugin.
const Name = "WorkloadAffinity"

// Reason is the filter reason, phrased for "N cluster(s) <reason>".
const Reason = "did not host every workload of the same affinity group"

// Plugin is the WorkloadAffinity filter.
type Plugin struct {
	groups framework.WorkloadGroups
}

var _ framework.PreFilterPlugin = &Plugin{}

// New returns the plugin, which finds the group's bindings through groups.
func New(groups framework.WorkloadGroups) *Plugin { return &Plugin{groups: groups} }

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// allowed is the PreFilter's result: the clusters every scheduled peer
// targets. A binding without peers on any cluster keeps no state, and every
// cluster passes.
type allowed map[string]struct{}

// PreFilter intersects the clusters of the other scheduled bindings of the
// group, once per cycle rather than once per cluster.
func (p *Plugin) PreFilter(ctx context.Context, b *framework.BindingInfo) *framework.Result {
	group := groupOf(b)
	if group == "" || b.Namespace == "" {
		// ClusterResourceBindings have no groups, as in Karmada.
		return nil
	}
	members, err := p.groups.Members(ctx, framework.AffinityGroup, b.Namespace, group)
	if err != nil {
		return framework.AsResult(fmt.Errorf("finding the bindings of affinity group %q: %w", group, err))
	}
	var set allowed
	for _, m := range members {
		if m.Name == b.Name || len(m.Clusters) == 0 {
			continue
		}
		if set == nil {
			set = make(allowed, len(m.Clusters))
			for _, c := range m.Clusters {
				set[c] = struct{}{}
			}
			continue
		}
		next := make(allowed, len(set))
		for _, c := range m.Clusters {
			if _, ok := set[c]; ok {
				next[c] = struct{}{}
			}
		}
		set = next
	}
	if set != nil {
		b.WriteState(Name, set)
	}
	return nil
}

// Filter passes a cluster the binding is already on (the plugin never
// takes a workload off a cluster), and otherwise one that every scheduled
// peer targets.
func (p *Plugin) Filter(_ context.Context, b *framework.BindingInfo, c *cache.ClusterInfo) *framework.Result {
	if b.IsCurrent(c.Name()) {
		return nil
	}
	v, ok := b.ReadState(Name)
	if !ok {
		return nil
	}
	if _, ok := v.(allowed)[c.Name()]; ok {
		return nil
	}
	return framework.NewResult(framework.Unschedulable, Reason)
}

func groupOf(b *framework.BindingInfo) string {
	if g := b.Spec.WorkloadAffinityGroups; g != nil {
		return g.AffinityGroup
	}
	return ""
}
