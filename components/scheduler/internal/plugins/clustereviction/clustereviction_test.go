package clustereviction_test

import (
	"context"
	"testing"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clustereviction"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name    string
		binding *fixture.BindingBuilder
		want    string
	}{
		{"no eviction", fixture.Binding("x"), ""},
		{"evicted from another cluster", fixture.Binding("x").Evicting("b"), ""},
		{"evicted from this cluster", fixture.Binding("x").Evicting("b").Evicting("a"), clustereviction.ReasonEvicting},
	}
	p := clustereviction.New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := p.Filter(context.Background(), framework.NewBindingInfo(tc.binding.Spec()), fixture.Cluster("a").Info())
			if r.Reason() != tc.want || r.IsSuccess() != (tc.want == "") {
				t.Errorf("got (%v, %q), want reason %q", r.IsSuccess(), r.Reason(), tc.want)
			}
		})
	}
}
