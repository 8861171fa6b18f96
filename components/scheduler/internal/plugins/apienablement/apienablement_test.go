package apienablement_test

import (
	"context"
	"testing"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/apienablement"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name    string
		binding *fixture.BindingBuilder
		cluster *fixture.ClusterBuilder
		want    string // failure reason, empty when the cluster passes
	}{
		{"served", fixture.Binding("x"), fixture.Cluster("a"), ""},
		{"not served", fixture.Binding("x").Resource("batch/v1", "Job"), fixture.Cluster("a"), apienablement.ReasonAPINotServed},
		{"same kind other version", fixture.Binding("x").Resource("apps/v1beta1", "Deployment"), fixture.Cluster("a"), apienablement.ReasonAPINotServed},
		{"incomplete list proves nothing", fixture.Binding("x").Resource("batch/v1", "Job"), fixture.Cluster("a").APIsIncomplete(), ""},
		{"current cluster keeps passing", fixture.Binding("x").Resource("batch/v1", "Job").Scheduled(fixture.T("a", 1)), fixture.Cluster("a"), ""},
		{"empty list", fixture.Binding("x"), fixture.Cluster("a").NoAPIs(), apienablement.ReasonAPINotServed},
	}
	p := apienablement.New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := p.Filter(context.Background(), framework.NewBindingInfo(tc.binding.Spec()), tc.cluster.Info())
			if r.Reason() != tc.want {
				t.Errorf("reason %q, want %q", r.Reason(), tc.want)
			}
			if r.IsSuccess() != (tc.want == "") {
				t.Errorf("success %v with reason %q", r.IsSuccess(), r.Reason())
			}
		})
	}
}
