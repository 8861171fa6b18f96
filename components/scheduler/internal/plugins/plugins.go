// Package plugins assembles the default scheduling framework from the
// plugins in its subpackages.
package plugins

import (
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/apienablement"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clusteraffinity"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clustereviction"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clusterlocality"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/spreadconstraint"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/tainttoleration"
)

// NewDefaultFramework returns the filters in Karmada's order (so the first
// failing reason per cluster matches its messages) and the scores.
func NewDefaultFramework() *framework.Framework {
	return framework.New(
		framework.WithFilter(
			apienablement.New(),
			tainttoleration.New(),
			clusteraffinity.New(),
			spreadconstraint.New(),
			clustereviction.New(),
		),
		framework.WithScore(clusterlocality.New(), 1),
	)
}
