package tainttoleration_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/tainttoleration"
)

func TestFilter(t *testing.T) {
	notReady := clusterv1alpha1.TaintClusterNotReady
	tests := []struct {
		name    string
		binding *fixture.BindingBuilder
		cluster *fixture.ClusterBuilder
		want    string
	}{
		{"no taints", fixture.Binding("x"), fixture.Cluster("a"), ""},
		{"NoSchedule untolerated", fixture.Binding("x"), fixture.Cluster("a").Taint(notReady, "", corev1.TaintEffectNoSchedule),
			"had untolerated taint {cluster.karmada.io/not-ready}"},
		{"value shown", fixture.Binding("x"), fixture.Cluster("a").Taint("dedicated", "gpu", corev1.TaintEffectNoSchedule),
			"had untolerated taint {dedicated: gpu}"},
		{"NoSchedule tolerated", fixture.Binding("x").Tolerate(notReady, corev1.TaintEffectNoSchedule),
			fixture.Cluster("a").Taint(notReady, "", corev1.TaintEffectNoSchedule), ""},
		{"toleration of another effect", fixture.Binding("x").Tolerate(notReady, corev1.TaintEffectNoExecute),
			fixture.Cluster("a").Taint(notReady, "", corev1.TaintEffectNoSchedule), "had untolerated taint {cluster.karmada.io/not-ready}"},
		{"PreferNoSchedule ignored", fixture.Binding("x"), fixture.Cluster("a").Taint("soft", "", corev1.TaintEffectPreferNoSchedule), ""},
		{"current cluster tolerates NoSchedule", fixture.Binding("x").Scheduled(fixture.T("a", 1)),
			fixture.Cluster("a").Taint(notReady, "", corev1.TaintEffectNoSchedule), ""},
		{"current cluster keeps the binding despite NoExecute", fixture.Binding("x").Scheduled(fixture.T("a", 1)),
			fixture.Cluster("a").Taint(notReady, "", corev1.TaintEffectNoExecute), ""},
		{"NoExecute untolerated for a new placement", fixture.Binding("x").Scheduled(fixture.T("b", 1)),
			fixture.Cluster("a").Taint(notReady, "", corev1.TaintEffectNoExecute), "had untolerated taint {cluster.karmada.io/not-ready}"},
		{"NoExecute tolerated", fixture.Binding("x").Tolerate(notReady, ""),
			fixture.Cluster("a").Taint(notReady, "", corev1.TaintEffectNoExecute), ""},
	}
	p := tainttoleration.New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := p.Filter(context.Background(), framework.NewBindingInfo(tc.binding.Spec()), tc.cluster.Info())
			if r.Reason() != tc.want || r.IsSuccess() != (tc.want == "") {
				t.Errorf("got (%v, %q), want reason %q", r.IsSuccess(), r.Reason(), tc.want)
			}
		})
	}
}
