// Package framework defines the scheduler's plugin points and what flows
// through them: filter plugins decide per cluster whether a binding may go
// there (with a reason when not), score plugins rank the clusters that
// passed, normalised to MinClusterScore..MaxClusterScore. The algorithm in
// package core runs them; plugins live under package plugins.
package framework

import (
	"context"
	"fmt"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
)

// Score bounds every score plugin normalises to.
const (
	MinClusterScore int64 = 0
	MaxClusterScore int64 = 100
)

// Code is the outcome of a plugin call.
type Code int

// Plugin outcomes.
const (
	// Success: the cluster passes.
	Success Code = iota
	// Unschedulable: the cluster does not fit; the reason says why.
	Unschedulable
	// Error: the plugin failed; scheduling stops with a SchedulerError.
	Error
)

// Result is a plugin's verdict. nil means success.
type Result struct {
	code   Code
	reason string
	err    error
}

// NewResult builds a result with a reason phrased for the "N cluster(s)
// <reason>" summary, e.g. "did not match the placement cluster affinity".
func NewResult(code Code, reason string) *Result {
	return &Result{code: code, reason: reason}
}

// AsResult wraps an internal error.
func AsResult(err error) *Result {
	return &Result{code: Error, reason: err.Error(), err: err}
}

// IsSuccess reports whether the cluster passes.
func (r *Result) IsSuccess() bool { return r == nil || r.code == Success }

// Code is the outcome.
func (r *Result) Code() Code {
	if r == nil {
		return Success
	}
	return r.code
}

// Reason explains a failure.
func (r *Result) Reason() string {
	if r == nil {
		return ""
	}
	return r.reason
}

// AsError returns the failure as an error, nil on success.
func (r *Result) AsError() error {
	if r.IsSuccess() {
		return nil
	}
	if r.err != nil {
		return r.err
	}
	return fmt.Errorf("%s", r.reason)
}

// Plugin is anything the framework runs.
type Plugin interface {
	// Name identifies the plugin in errors and logs.
	Name() string
}

// FilterPlugin rules clusters in or out for a binding.
type FilterPlugin interface {
	Plugin
	// Filter returns nil (or a Success result) when the binding may go to
	// the cluster. It must not keep b or c, and must not block.
	Filter(ctx context.Context, b *BindingInfo, c *cache.ClusterInfo) *Result
}

// PreFilterPlugin is a FilterPlugin with work to do once per binding and
// cycle rather than once per cluster, such as looking up other bindings.
// The framework runs PreFilter before any Filter of the cycle; what it
// finds goes into the BindingInfo (WriteState).
type PreFilterPlugin interface {
	FilterPlugin
	// PreFilter returns nil on success; any other result stops the cycle
	// with a SchedulerError.
	PreFilter(ctx context.Context, b *BindingInfo) *Result
}

// ScorePlugin ranks the clusters that passed the filters.
type ScorePlugin interface {
	Plugin
	// Score rates one cluster; any range, NormalizeScore maps it to
	// MinClusterScore..MaxClusterScore.
	Score(ctx context.Context, b *BindingInfo, c *cache.ClusterInfo) (int64, *Result)
	// ScoreExtensions returns the normaliser, or nil when Score already
	// returns values within the bounds.
	ScoreExtensions() ScoreExtensions
}

// ScoreExtensions post-processes a plugin's scores over all clusters.
type ScoreExtensions interface {
	// NormalizeScore rewrites scores in place to the bounds.
	NormalizeScore(ctx context.Context, b *BindingInfo, scores []ClusterScore) *Result
}

// ClusterScore is one cluster's score from one plugin.
type ClusterScore struct {
	Cluster *cache.ClusterInfo
	Score   int64
}

// DefaultNormalizeScore scales scores so that the highest becomes
// MaxClusterScore (and, with reverse, the highest becomes the lowest). All
// zero scores stay zero, or all become MaxClusterScore with reverse.
func DefaultNormalizeScore(reverse bool, scores []ClusterScore) {
	var highest int64
	for _, s := range scores {
		highest = max(highest, s.Score)
	}
	for i := range scores {
		s := scores[i].Score
		if highest > 0 {
			s = s * MaxClusterScore / highest
		} else {
			s = 0
		}
		if reverse {
			s = MaxClusterScore - s
		}
		scores[i].Score = s
	}
}
