package federatedhpa

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// podMetrics is a PodMetrics as the metrics adapter serves it: from
// cluster when set, with containers' CPU use in millicores.
func podMetrics(cluster, name string, at time.Time, cpu map[string]int64) *metricsv1beta1.PodMetrics {
	pm := &metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "web"}},
		Timestamp: metav1.NewTime(at), Window: metav1.Duration{Duration: 15 * time.Second}}
	if cluster != "" {
		pm.Annotations = map[string]string{autoscalingv1alpha1.QuerySourceAnnotation: cluster}
	}
	for c, v := range cpu {
		pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: c,
			Usage: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(v, resource.DecimalSI)}})
	}
	return pm
}

func TestRESTResourceMetrics(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	sample := func(v int64) PodMetric { return PodMetric{Value: v, Timestamp: at, Window: 15 * time.Second} }
	// Pods of the same name in two members, as the adapter lists them: the
	// fake's object tracker keeps one object per name, so the list is
	// answered directly.
	items := []metricsv1beta1.PodMetrics{
		*podMetrics("m1", "web-0", at, map[string]int64{"app": 300, "sidecar": 50}),
		*podMetrics("m2", "web-0", at, map[string]int64{"app": 100, "sidecar": 10}),
		*podMetrics("", "web-1", at, map[string]int64{"app": 200, "sidecar": 20}),
	}
	clientset := metricsfake.NewSimpleClientset()
	clientset.PrependReactor("list", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		list := &metricsv1beta1.PodMetricsList{}
		if action.GetNamespace() == "ns" {
			list.Items = items
		}
		return true, list, nil
	})
	m := &RESTMetrics{resource: clientset.MetricsV1beta1()}
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})

	got, _, err := m.Resource(t.Context(), corev1.ResourceCPU, "ns", sel, "")
	if err != nil {
		t.Fatal(err)
	}
	want := PodMetrics{{"m1", "web-0"}: sample(350), {"m2", "web-0"}: sample(110), {"", "web-1"}: sample(220)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods' CPU, all containers (-want +got):\n%s", diff)
	}

	got, _, err = m.Resource(t.Context(), corev1.ResourceCPU, "ns", sel, "sidecar")
	if err != nil {
		t.Fatal(err)
	}
	want = PodMetrics{{"m1", "web-0"}: sample(50), {"m2", "web-0"}: sample(10), {"", "web-1"}: sample(20)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the sidecar's CPU (-want +got):\n%s", diff)
	}

	// A pod without a sample of the resource is left out.
	got, _, err = m.Resource(t.Context(), corev1.ResourceMemory, "ns", sel, "")
	if err != nil || len(got) != 0 {
		t.Errorf("memory: %v, %v; want no samples", got, err)
	}
	if _, _, err := m.Resource(t.Context(), corev1.ResourceCPU, "ns", sel, "nosuch"); err == nil {
		t.Error("a container no pod has: no error")
	}
	if _, _, err := m.Resource(t.Context(), corev1.ResourceCPU, "other", sel, ""); err == nil {
		t.Error("no pod metrics at all: no error")
	}
}
