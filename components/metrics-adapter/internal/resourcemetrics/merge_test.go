package resourcemetrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/metrics/pkg/apis/metrics"
)

func pod(namespace, name, cpu string, annotations map[string]string) metrics.PodMetrics {
	return metrics.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Containers: []metrics.ContainerMetrics{{Name: "app", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}},
	}
}

func from(cluster string) map[string]string {
	return map[string]string{QueryFromClusterAnnotation: cluster}
}

func TestMergePods(t *testing.T) {
	tests := []struct {
		name    string
		answers []memberItems[metrics.PodMetrics]
		want    []metrics.PodMetrics
	}{
		{name: "no members", want: nil},
		{
			name: "a member that failed is left out",
			answers: []memberItems[metrics.PodMetrics]{
				{},
				{cluster: "member2", items: []metrics.PodMetrics{pod("default", "web-1", "10m", nil)}},
			},
			want: []metrics.PodMetrics{pod("default", "web-1", "10m", from("member2"))},
		},
		{
			name: "the same pod name in two members appears twice, each marked with its member",
			answers: []memberItems[metrics.PodMetrics]{
				{cluster: "member2", items: []metrics.PodMetrics{pod("default", "web-1", "20m", nil)}},
				{cluster: "member1", items: []metrics.PodMetrics{pod("default", "web-1", "10m", nil), pod("default", "db-0", "5m", nil)}},
			},
			want: []metrics.PodMetrics{
				pod("default", "db-0", "5m", from("member1")),
				pod("default", "web-1", "10m", from("member1")),
				pod("default", "web-1", "20m", from("member2")),
			},
		},
		{
			name: "sorted by namespace first; the member's own annotations are kept",
			answers: []memberItems[metrics.PodMetrics]{
				{cluster: "member1", items: []metrics.PodMetrics{pod("b", "x", "1m", map[string]string{"k": "v"}), pod("a", "y", "1m", nil)}},
			},
			want: []metrics.PodMetrics{
				pod("a", "y", "1m", from("member1")),
				pod("b", "x", "1m", map[string]string{"k": "v", QueryFromClusterAnnotation: "member1"}),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mergePods(tt.answers)); diff != "" {
				t.Errorf("mergePods (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergePodsLeavesAnswersAlone(t *testing.T) {
	own := map[string]string{"k": "v"}
	mergePods([]memberItems[metrics.PodMetrics]{{cluster: "member1", items: []metrics.PodMetrics{pod("a", "x", "1m", own)}}})
	if diff := cmp.Diff(map[string]string{"k": "v"}, own); diff != "" {
		t.Errorf("the member's answer changed (-want +got):\n%s", diff)
	}
}

func TestMergeNodes(t *testing.T) {
	node := func(name string, annotations map[string]string) metrics.NodeMetrics {
		return metrics.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	}
	got := mergeNodes([]memberItems[metrics.NodeMetrics]{
		{cluster: "member2", items: []metrics.NodeMetrics{node("member2-node1", nil)}},
		{cluster: "member1", items: []metrics.NodeMetrics{node("member1-node2", nil), node("member1-node1", nil)}},
	})
	want := []metrics.NodeMetrics{
		node("member1-node1", from("member1")),
		node("member1-node2", from("member1")),
		node("member2-node1", from("member2")),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mergeNodes (-want +got):\n%s", diff)
	}
}

func TestSingle(t *testing.T) {
	meta := func(p metrics.PodMetrics) metav1.ObjectMeta { return p.ObjectMeta }
	tests := []struct {
		name     string
		merged   []metrics.PodMetrics
		want     metrics.PodMetrics
		notFound bool
		conflict bool
	}{
		{name: "in no member", notFound: true},
		{name: "in one member", merged: []metrics.PodMetrics{pod("default", "web-1", "1m", from("member1"))}, want: pod("default", "web-1", "1m", from("member1"))},
		{name: "in two members", merged: []metrics.PodMetrics{pod("default", "web-1", "1m", from("member1")), pod("default", "web-1", "2m", from("member2"))}, conflict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := single(podMetricsResource, "web-1", tt.merged, meta)
			if apierrors.IsNotFound(err) != tt.notFound || apierrors.IsConflict(err) != tt.conflict {
				t.Fatalf("single: error %v, want NotFound %v, Conflict %v", err, tt.notFound, tt.conflict)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("single (-want +got):\n%s", diff)
			}
		})
	}
}
