package localfed

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestSetPodUsageRefusesBadInput(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	tests := []struct {
		name      string
		metrics   bool
		namespace string
		usage     corev1.ResourceList
		wantErr   string
	}{
		{name: "without Options.Metrics", namespace: "ns", usage: cpu, wantErr: "Options.Metrics"},
		{name: "no namespace", metrics: true, usage: cpu, wantErr: "namespace is empty"},
		{name: "a resource kwok does not simulate", metrics: true, namespace: "ns",
			usage: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}, wantErr: `"ephemeral-storage" is not simulated`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Federation{opts: Options{Metrics: tt.metrics}, stopped: map[string]bool{}}
			err := f.SetPodUsage(t.Context(), tt.namespace, tt.usage)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("SetPodUsage: error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestMetricsOptionsConflicts(t *testing.T) {
	for _, o := range []Options{
		{MetricsAdapter: true, NoControlPlane: true},
		{Metrics: true, APIServerOnlyMembers: true},
	} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestMetricsServerBinaryMissing(t *testing.T) {
	err := checkMetricsServerBinary(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "make k8s-binaries") {
		t.Errorf("error %v, want one naming make k8s-binaries", err)
	}
}
