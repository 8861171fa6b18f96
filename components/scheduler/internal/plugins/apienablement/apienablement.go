// Package apienablement filters out clusters that do not serve the
// template's kind, so a resource is never sent where it cannot exist.
package apienablement

import (
	"context"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Name of the plugin.
const Name = "APIEnablement"

// ReasonAPINotServed is the filter reason.
const ReasonAPINotServed = "did not have the API resource"

// Plugin is the APIEnablement filter.
type Plugin struct {
	notServed *framework.Result
}

var _ framework.FilterPlugin = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{notServed: framework.NewResult(framework.Unschedulable, ReasonAPINotServed)}
}

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// Filter passes clusters listing the kind in status.apiEnablements. A
// cluster whose list is declared incomplete passes too, since absence proves
// nothing there; and a cluster already holding the binding keeps it, so a
// flaky discovery never deletes running workloads.
func (p *Plugin) Filter(_ context.Context, b *framework.BindingInfo, c *cache.ClusterInfo) *framework.Result {
	if c.ServesAPI(b.APIKey) || c.APIEnablementsIncomplete() || b.IsCurrent(c.Name()) {
		return nil
	}
	return p.notServed
}
