// Package clustereviction filters out clusters the binding is being evicted
// from, so a failover never lands back where it is leaving.
package clustereviction

import (
	"context"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Name of the plugin.
const Name = "ClusterEviction"

// ReasonEvicting is the filter reason.
const ReasonEvicting = "is in the process of eviction"

// Plugin is the ClusterEviction filter.
type Plugin struct {
	evicting *framework.Result
}

var _ framework.FilterPlugin = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{evicting: framework.NewResult(framework.Unschedulable, ReasonEvicting)}
}

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// Filter fails clusters named by spec.gracefulEvictionTasks.
func (p *Plugin) Filter(_ context.Context, b *framework.BindingInfo, c *cache.ClusterInfo) *framework.Result {
	if b.Evicting(c.Name()) {
		return p.evicting
	}
	return nil
}
