// Package spreadconstraint filters out clusters that lack the property the
// placement spreads over: a cluster without a region cannot count towards
// a spread over regions.
package spreadconstraint

import (
	"context"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Name of the plugin.
const Name = "SpreadConstraint"

// Filter reasons.
const (
	ReasonNoProvider   = "did not have provider property"
	ReasonNoRegion     = "did not have region property"
	ReasonNoZones      = "did not have zones property"
	ReasonNoLabelFront = "did not have label "
)

// Plugin is the SpreadConstraint filter.
type Plugin struct {
	noProvider, noRegion, noZones *framework.Result
}

var _ framework.FilterPlugin = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{
		noProvider: framework.NewResult(framework.Unschedulable, ReasonNoProvider),
		noRegion:   framework.NewResult(framework.Unschedulable, ReasonNoRegion),
		noZones:    framework.NewResult(framework.Unschedulable, ReasonNoZones),
	}
}

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// Filter fails a cluster missing the field or label of any constraint.
func (p *Plugin) Filter(_ context.Context, b *framework.BindingInfo, c *cache.ClusterInfo) *framework.Result {
	for i := range b.Placement.SpreadConstraints {
		sc := &b.Placement.SpreadConstraints[i]
		if sc.SpreadByLabel != "" {
			if _, ok := c.Cluster.Labels[sc.SpreadByLabel]; !ok {
				return framework.NewResult(framework.Unschedulable, ReasonNoLabelFront+sc.SpreadByLabel)
			}
			continue
		}
		switch sc.SpreadByField {
		case policyv1alpha1.SpreadByFieldProvider:
			if c.Cluster.Spec.Provider == "" {
				return p.noProvider
			}
		case policyv1alpha1.SpreadByFieldRegion:
			if c.Cluster.Spec.Region == "" {
				return p.noRegion
			}
		case policyv1alpha1.SpreadByFieldZone:
			if len(c.Zones) == 0 {
				return p.noZones
			}
		}
	}
	return nil
}
