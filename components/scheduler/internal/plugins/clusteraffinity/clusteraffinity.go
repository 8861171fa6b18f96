// Package clusteraffinity filters out clusters outside the placement's
// cluster affinity (the term being tried, with its overflow terms).
package clusteraffinity

import (
	"context"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Name of the plugin.
const Name = "ClusterAffinity"

// ReasonNotMatched is the filter reason.
const ReasonNotMatched = "did not match the placement cluster affinity"

// Plugin is the ClusterAffinity filter.
type Plugin struct {
	notMatched *framework.Result
}

var _ framework.FilterPlugin = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{notMatched: framework.NewResult(framework.Unschedulable, ReasonNotMatched)}
}

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// Filter passes a cluster matching any tier of the affinity being tried.
func (p *Plugin) Filter(_ context.Context, b *framework.BindingInfo, c *cache.ClusterInfo) *framework.Result {
	if b.Tier(c.Cluster) < 0 {
		return p.notMatched
	}
	return nil
}
