// Package clusterlocality scores the clusters a binding already runs in
// highest, so rescheduling moves as little as possible.
package clusterlocality

import (
	"context"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Name of the plugin.
const Name = "ClusterLocality"

// Plugin is the ClusterLocality score.
type Plugin struct{}

var (
	_ framework.ScorePlugin     = &Plugin{}
	_ framework.ScoreExtensions = &Plugin{}
)

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// Score is the maximum for clusters in spec.clusters, the minimum for the
// others.
func (p *Plugin) Score(_ context.Context, b *framework.BindingInfo, c *cache.ClusterInfo) (int64, *framework.Result) {
	if b.IsCurrent(c.Name()) {
		return framework.MaxClusterScore, nil
	}
	return framework.MinClusterScore, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (p *Plugin) ScoreExtensions() framework.ScoreExtensions { return p }

// NormalizeScore implements framework.ScoreExtensions. The scores are
// already within bounds; normalising keeps the contract explicit should
// Score ever weigh clusters by how many replicas they hold.
func (p *Plugin) NormalizeScore(_ context.Context, _ *framework.BindingInfo, scores []framework.ClusterScore) *framework.Result {
	framework.DefaultNormalizeScore(false, scores)
	return nil
}
