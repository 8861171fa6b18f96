package framework_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

func TestFitErrorMessage(t *testing.T) {
	var d framework.Diagnosis
	d.Add("member1", "had untolerated taint {cluster.karmada.io/not-ready}")
	d.Add("member2", "did not match the placement cluster affinity")
	d.Add("member3", "did not match the placement cluster affinity")
	err := &framework.FitError{NumAllClusters: 3, Diagnosis: d}
	want := "0/3 clusters are available: 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready}, 2 cluster(s) did not match the placement cluster affinity."
	if err.Error() != want {
		t.Errorf("message\n got: %s\nwant: %s", err.Error(), want)
	}
	if got := (&framework.FitError{}).Error(); got != "0/0 clusters are available." {
		t.Errorf("empty: %s", got)
	}
}

func TestDefaultNormalizeScore(t *testing.T) {
	tests := []struct {
		name    string
		reverse bool
		in      []int64
		want    []int64
	}{
		{"scaled to 100", false, []int64{0, 5, 10}, []int64{0, 50, 100}},
		{"reversed", true, []int64{0, 5, 10}, []int64{100, 50, 0}},
		{"all zero", false, []int64{0, 0}, []int64{0, 0}},
		{"all zero reversed", true, []int64{0, 0}, []int64{100, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scores := make([]framework.ClusterScore, len(tc.in))
			for i, v := range tc.in {
				scores[i].Score = v
			}
			framework.DefaultNormalizeScore(tc.reverse, scores)
			got := make([]int64, len(scores))
			for i := range scores {
				got[i] = scores[i].Score
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

type rawScore struct{ v int64 }

func (p rawScore) Name() string { return "raw" }
func (p rawScore) Score(context.Context, *framework.BindingInfo, *cache.ClusterInfo) (int64, *framework.Result) {
	return p.v, nil
}
func (p rawScore) ScoreExtensions() framework.ScoreExtensions { return nil }

type failing struct{}

func (failing) Name() string { return "failing" }
func (failing) Filter(context.Context, *framework.BindingInfo, *cache.ClusterInfo) *framework.Result {
	return framework.AsResult(errors.New("boom"))
}

func TestRunPlugins(t *testing.T) {
	ctx := context.Background()
	b := framework.NewBindingInfo(fixture.Binding("x").Spec())
	clusters := []*cache.ClusterInfo{fixture.Cluster("a").Info()}

	fw := framework.New(framework.WithScore(rawScore{v: 300}, 1))
	if err := fw.RunScorePlugins(ctx, b, clusters, make([]int64, 1)); err == nil {
		t.Error("a score outside the bounds without a normaliser must fail")
	}
	fw = framework.New(framework.WithScore(rawScore{v: 40}, 2), framework.WithScore(rawScore{v: 10}, 1))
	totals := make([]int64, 1)
	if err := fw.RunScorePlugins(ctx, b, clusters, totals); err != nil || totals[0] != 90 {
		t.Errorf("weighted total %d, err %v; want 90", totals[0], err)
	}

	fw = framework.New(framework.WithFilter(failing{}))
	r := fw.RunFilterPlugins(ctx, b, clusters[0])
	if r.Code() != framework.Error || r.AsError().Error() != "filter plugin failing: boom" {
		t.Errorf("got %v %v", r.Code(), r.AsError())
	}
}
