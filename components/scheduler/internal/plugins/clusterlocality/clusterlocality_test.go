package clusterlocality_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clusterlocality"
)

func TestScore(t *testing.T) {
	tests := []struct {
		name    string
		binding *fixture.BindingBuilder
		want    []int64 // for clusters a, b, c
	}{
		{"never scheduled", fixture.Binding("x"), []int64{0, 0, 0}},
		{"sticks to current clusters", fixture.Binding("x").Scheduled(fixture.T("a", 2), fixture.T("c", 1)), []int64{100, 0, 100}},
		{"current without replicas", fixture.Binding("x").Scheduled(fixture.T("b", 0)), []int64{0, 100, 0}},
	}
	fw := framework.New(framework.WithScore(clusterlocality.New(), 1))
	clusters := []*cache.ClusterInfo{fixture.Cluster("a").Info(), fixture.Cluster("b").Info(), fixture.Cluster("c").Info()}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]int64, len(clusters))
			if err := fw.RunScorePlugins(context.Background(), framework.NewBindingInfo(tc.binding.Spec()), clusters, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}
