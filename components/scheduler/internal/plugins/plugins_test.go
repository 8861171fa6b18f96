package plugins_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins"
)

// The first failing filter names the reason, in Karmada's order.
func TestDefaultFrameworkOrder(t *testing.T) {
	fw := plugins.NewDefaultFramework()
	b := framework.NewBindingInfo(fixture.Binding("x").Resource("batch/v1", "Job").Spec())
	c := fixture.Cluster("a").Taint("t", "", corev1.TaintEffectNoSchedule).Info()
	if r := fw.RunFilterPlugins(context.Background(), b, c); r.Reason() != "did not have the API resource" {
		t.Errorf("first reason %q", r.Reason())
	}
}
