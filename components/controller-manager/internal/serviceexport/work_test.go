package serviceexport

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func TestManagedBy(t *testing.T) {
	tests := []struct {
		name        string
		label       string
		with        string
		withoutExpo []string
	}{
		{"none yet", "", "ServiceExport", nil},
		{"already", "ServiceExport", "ServiceExport", nil},
		{"shared, sorted", "ServiceExport.MultiClusterService", "MultiClusterService.ServiceExport", []string{"MultiClusterService"}},
		{"the other only", "MultiClusterService", "MultiClusterService.ServiceExport", []string{"MultiClusterService"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels := map[string]string{workv1alpha1.EndpointSliceWorkManagedByLabel: tt.label}
			if got := WithManager(ManagedBy(labels), ManagedByKind); got != tt.with {
				t.Errorf("WithManager = %q, want %q", got, tt.with)
			}
			if diff := cmp.Diff(tt.withoutExpo, WithoutManager(ManagedBy(labels), ManagedByKind), cmp.Comparer(func(a, b []string) bool {
				return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b))
			})); diff != "" {
				t.Errorf("WithoutManager (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCollectable(t *testing.T) {
	tests := []struct {
		name string
		meta metav1.ObjectMeta
		want bool
	}{
		{"the member's own, with its Service's labels", metav1.ObjectMeta{Labels: map[string]string{
			"kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
			workv1alpha1.ManagedByKarmadaLabel: "true", workv1alpha1.WorkPermanentIDLabel: "id"}}, true},
		{"applied from a Work", metav1.ObjectMeta{Annotations: map[string]string{workv1alpha1.WorkNameAnnotation: "w"}}, false},
		{"dispatched", metav1.ObjectMeta{Labels: map[string]string{"endpointslice.kubernetes.io/managed-by": workv1alpha1.EndpointSliceDispatchControllerLabelValue}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Collectable(&tt.meta); got != tt.want {
				t.Errorf("Collectable = %v, want %v", got, tt.want)
			}
		})
	}
}
