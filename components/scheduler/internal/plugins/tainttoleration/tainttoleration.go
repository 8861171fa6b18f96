// Package tainttoleration keeps new placements off clusters with NoSchedule
// or NoExecute taints the placement does not tolerate.
package tainttoleration

import (
	"context"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Name of the plugin.
const Name = "TaintToleration"

// ReasonUntoleratedTaintPrefix starts the filter reason; the taint follows.
const ReasonUntoleratedTaintPrefix = "had untolerated taint "

// Plugin is the TaintToleration filter.
type Plugin struct{}

var _ framework.FilterPlugin = &Plugin{}

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// Filter fails a cluster with an untolerated NoSchedule or NoExecute taint,
// unless the cluster already holds the binding. As in Karmada, taints only
// keep new placements away: the scheduler never takes a workload off a
// cluster for a taint, since evicting (after tolerationSeconds, through
// graceful eviction tasks) is failover's job, not a side effect of the next
// scheduling cycle.
func (p *Plugin) Filter(_ context.Context, b *framework.BindingInfo, c *cache.ClusterInfo) *framework.Result {
	taints := c.Cluster.Spec.Taints
	if len(taints) == 0 || b.IsCurrent(c.Name()) {
		return nil
	}
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !Tolerated(t, b.Placement.ClusterTolerations) {
			return framework.NewResult(framework.Unschedulable, ReasonUntoleratedTaintPrefix+Format(t))
		}
	}
	return nil
}

// Tolerated reports whether any toleration tolerates the taint.
func Tolerated(t *corev1.Taint, tolerations []corev1.Toleration) bool {
	for i := range tolerations {
		// The logger only hears about malformed numeric values of Gt/Lt
		// tolerations, which validation rejects.
		if tolerations[i].ToleratesTaint(logr.Discard(), t, true) {
			return true
		}
	}
	return false
}

// Format renders a taint for messages: {key} or {key: value}.
func Format(t *corev1.Taint) string {
	if t.Value == "" {
		return "{" + t.Key + "}"
	}
	return "{" + t.Key + ": " + t.Value + "}"
}
