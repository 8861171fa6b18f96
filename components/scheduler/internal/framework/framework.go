package framework

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
)

// Framework runs an ordered set of filter and score plugins.
type Framework struct {
	filters []FilterPlugin
	scorers []weightedScorer
}

type weightedScorer struct {
	plugin ScorePlugin
	weight int64
}

// Option configures a Framework.
type Option func(*Framework)

// WithFilter appends filter plugins; they run in the order given and the
// first failure decides the cluster's reason.
func WithFilter(plugins ...FilterPlugin) Option {
	return func(f *Framework) { f.filters = append(f.filters, plugins...) }
}

// WithScore appends a score plugin whose normalised score counts weight
// times.
func WithScore(plugin ScorePlugin, weight int64) Option {
	return func(f *Framework) { f.scorers = append(f.scorers, weightedScorer{plugin: plugin, weight: weight}) }
}

// New builds a framework.
func New(opts ...Option) *Framework {
	f := &Framework{}
	for _, o := range opts {
		o(f)
	}
	return f
}

// RunPreFilterPlugins runs PreFilter of the filter plugins that have one,
// in order; nil when all succeed.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, b *BindingInfo) *Result {
	for _, p := range f.filters {
		pre, ok := p.(PreFilterPlugin)
		if !ok {
			continue
		}
		if r := pre.PreFilter(ctx, b); !r.IsSuccess() {
			return AsResult(fmt.Errorf("prefilter plugin %s: %w", p.Name(), r.AsError()))
		}
	}
	return nil
}

// RunFilterPlugins returns nil when every filter passes the cluster, else
// the first failure.
func (f *Framework) RunFilterPlugins(ctx context.Context, b *BindingInfo, c *cache.ClusterInfo) *Result {
	for _, p := range f.filters {
		if r := p.Filter(ctx, b, c); !r.IsSuccess() {
			if r.code == Error {
				return AsResult(fmt.Errorf("filter plugin %s: %w", p.Name(), r.AsError()))
			}
			return r
		}
	}
	return nil
}

// FilterNames lists the filter plugins in the order they run.
func (f *Framework) FilterNames() []string {
	names := make([]string, len(f.filters))
	for i, p := range f.filters {
		names[i] = p.Name()
	}
	return names
}

// ScoreNames lists the score plugins in the order they run.
func (f *Framework) ScoreNames() []string {
	names := make([]string, len(f.scorers))
	for i, s := range f.scorers {
		names[i] = s.plugin.Name()
	}
	return names
}

// RunScorePlugins scores every cluster with every plugin, normalises each
// plugin's scores and writes the weighted sums into totals (aligned with
// clusters).
func (f *Framework) RunScorePlugins(ctx context.Context, b *BindingInfo, clusters []*cache.ClusterInfo, totals []int64) error {
	clear(totals)
	if len(f.scorers) == 0 {
		return nil
	}
	scores := make([]ClusterScore, len(clusters))
	for _, s := range f.scorers {
		for i, c := range clusters {
			v, r := s.plugin.Score(ctx, b, c)
			if !r.IsSuccess() {
				return fmt.Errorf("score plugin %s on cluster %s: %w", s.plugin.Name(), c.Name(), r.AsError())
			}
			scores[i] = ClusterScore{Cluster: c, Score: v}
		}
		if ext := s.plugin.ScoreExtensions(); ext != nil {
			if r := ext.NormalizeScore(ctx, b, scores); !r.IsSuccess() {
				return fmt.Errorf("normalising scores of plugin %s: %w", s.plugin.Name(), r.AsError())
			}
		}
		for i := range scores {
			v := scores[i].Score
			if v < MinClusterScore || v > MaxClusterScore {
				return fmt.Errorf("score plugin %s gave cluster %s score %d, outside [%d, %d]", s.plugin.Name(), clusters[i].Name(), v, MinClusterScore, MaxClusterScore)
			}
			totals[i] += v * s.weight
		}
	}
	return nil
}

// Diagnosis records why clusters were filtered out.
type Diagnosis struct {
	// Filtered lists each filtered cluster with the first failing reason.
	Filtered []ClusterReason
}

// ClusterReason is why one cluster was filtered out.
type ClusterReason struct {
	Cluster string
	Reason  string
}

// Add records a filtered cluster.
func (d *Diagnosis) Add(cluster, reason string) {
	d.Filtered = append(d.Filtered, ClusterReason{Cluster: cluster, Reason: reason})
}

// Summary counts clusters per reason, kube-scheduler style: "1 cluster(s)
// had untolerated taint {x}, 2 cluster(s) did not match ...", sorted so the
// message is stable.
func (d *Diagnosis) Summary() string {
	counts := make(map[string]int, 4)
	for _, f := range d.Filtered {
		counts[f.Reason]++
	}
	parts := make([]string, 0, len(counts))
	for r, n := range counts {
		parts = append(parts, strconv.Itoa(n)+" cluster(s) "+r)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// FitError says that no cluster passed the filters (reason NoClusterFit).
type FitError struct {
	// NumAllClusters is the number of clusters considered.
	NumAllClusters int
	// Diagnosis is why each was filtered out.
	Diagnosis Diagnosis
}

func (e *FitError) Error() string {
	msg := fmt.Sprintf("0/%d clusters are available", e.NumAllClusters)
	if s := e.Diagnosis.Summary(); s != "" {
		msg += ": " + s
	}
	return msg + "."
}

// UnschedulableError says that clusters passed the filters but cannot take
// the replicas, or the spread constraints cannot be met (reason
// Unschedulable).
type UnschedulableError struct {
	// Message explains it to the user.
	Message string
}

func (e *UnschedulableError) Error() string { return e.Message }

// Unschedulablef builds an UnschedulableError.
func Unschedulablef(format string, args ...any) *UnschedulableError {
	return &UnschedulableError{Message: fmt.Sprintf(format, args...)}
}
