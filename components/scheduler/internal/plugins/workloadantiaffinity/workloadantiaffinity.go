// Package workloadantiaffinity keeps the workloads of one anti-affinity
// group (spec.workloadAffinityGroups.antiAffinityGroup) apart: a new
// placement may not use a cluster that another binding of the group
// targets.
package workloadantiaffinity

import (
	"context"
	"fmt"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Name of the plugin.
const Name = "WorkloadAntiAffinity"

// Reason is the filter reason, phrased for "N cluster(s) <reason>".
const Reason = "already hosted a workload of the same anti-affinity group"

// Plugin is the WorkloadAntiAffinity filter.
type Plugin struct {
	groups framework.WorkloadGroups
}

var _ framework.PreFilterPlugin = &Plugin{}

// New returns the plugin, which finds the group's bindings through groups.
func New(groups framework.WorkloadGroups) *Plugin { return &Plugin{groups: groups} }

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// taken is the PreFilter's result: the clusters other bindings of the
// group target.
type taken map[string]struct{}

// PreFilter collects the clusters of the other bindings of the group, once
// per cycle rather than once per cluster.
func (p *Plugin) PreFilter(ctx context.Context, b *framework.BindingInfo) *framework.Result {
	group := groupOf(b)
	if group == "" || b.Namespace == "" {
		// ClusterResourceBindings have no groups, as in Karmada.
		return nil
	}
	members, err := p.groups.Members(ctx, framework.AntiAffinityGroup, b.Namespace, group)
	if err != nil {
		return framework.AsResult(fmt.Errorf("finding the bindings of anti-affinity group %q: %w", group, err))
	}
	set := taken{}
	for _, m := range members {
		if m.Name == b.Name {
			continue
		}
		for _, c := range m.Clusters {
			set[c] = struct{}{}
		}
	}
	if len(set) > 0 {
		b.WriteState(Name, set)
	}
	return nil
}

// Filter refuses a cluster another binding of the group targets, unless
// the binding is already there itself (the plugin never takes a workload
// off a cluster).
func (p *Plugin) Filter(_ context.Context, b *framework.BindingInfo, c *cache.ClusterInfo) *framework.Result {
	if b.IsCurrent(c.Name()) {
		return nil
	}
	v, ok := b.ReadState(Name)
	if !ok {
		return nil
	}
	if _, ok := v.(taken)[c.Name()]; ok {
		return framework.NewResult(framework.Unschedulable, Reason)
	}
	return nil
}

func groupOf(b *framework.BindingInfo) string {
	if g := b.Spec.WorkloadAffinityGroups; g != nil {
		return g.AntiAffinityGroup
	}
	return ""
}
