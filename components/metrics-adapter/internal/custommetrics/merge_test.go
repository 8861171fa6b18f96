package custommetrics

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

var t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func value(kind, namespace, name, metric, v string, at metav1.Time) custom_metrics.MetricValue {
	return custom_metrics.MetricValue{
		DescribedObject: custom_metrics.ObjectReference{Kind: kind, APIVersion: "v1", Namespace: namespace, Name: name},
		Metric:          custom_metrics.MetricIdentifier{Name: metric},
		Timestamp:       at,
		Value:           resource.MustParse(v),
	}
}

func TestSumByObject(t *testing.T) {
	later := metav1.NewTime(t0.Add(time.Minute))
	tests := []struct {
		name    string
		answers [][]custom_metrics.MetricValue
		want    []custom_metrics.MetricValue
	}{
		{name: "no answers", want: nil},
		{
			name: "one object in two members: values added, newest timestamp",
			answers: [][]custom_metrics.MetricValue{
				{value("Service", "default", "web", "requests", "10", t0)},
				nil,
				{value("Service", "default", "web", "requests", "5", later)},
			},
			want: []custom_metrics.MetricValue{value("Service", "default", "web", "requests", "15", later)},
		},
		{
			name: "different objects and metrics stay apart, sorted",
			answers: [][]custom_metrics.MetricValue{
				{value("Pod", "default", "web-2", "requests", "1", t0), value("Pod", "default", "web-1", "requests", "2", t0)},
				{value("Pod", "default", "web-1", "latency", "3", t0), value("Pod", "other", "web-1", "requests", "4", t0)},
			},
			want: []custom_metrics.MetricValue{
				value("Pod", "default", "web-1", "latency", "3", t0),
				value("Pod", "default", "web-1", "requests", "2", t0),
				value("Pod", "default", "web-2", "requests", "1", t0),
				value("Pod", "other", "web-1", "requests", "4", t0),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sumByObject(tt.answers)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("sumByObject (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSumByObjectLeavesAnswersAlone(t *testing.T) {
	first := []custom_metrics.MetricValue{value("Pod", "default", "web-1", "requests", "1", t0)}
	sumByObject([][]custom_metrics.MetricValue{first, {value("Pod", "default", "web-1", "requests", "2", t0)}})
	if got := first[0].Value.String(); got != "1" {
		t.Errorf("the first member's answer changed to %s", got)
	}
}

func TestNewestServed(t *testing.T) {
	tests := []struct {
		served []string
		want   string
		ok     bool
	}{
		{served: nil},
		{served: []string{"v1alpha1"}},
		{served: []string{"v1beta1"}, want: "v1beta1", ok: true},
		{served: []string{"v1beta1", "v1beta2"}, want: "v1beta2", ok: true},
	}
	for _, tt := range tests {
		gv, ok := newestServed(tt.served)
		if ok != tt.ok || gv.Version != tt.want || (ok && gv.Group != custom_metrics.GroupName) {
			t.Errorf("newestServed(%v) = %v, %v; want version %q, %v", tt.served, gv, ok, tt.want, tt.ok)
		}
	}
}

func TestMetricInfosAndUnion(t *testing.T) {
	member1 := metricInfos([]metav1.APIResource{
		{Name: "pods/requests", Namespaced: true},
		{Name: "jobs.batch/queue_length", Namespaced: true},
		{Name: "namespaces/requests", Namespaced: false},
		{Name: "not-a-metric"},
	})
	member2 := metricInfos([]metav1.APIResource{{Name: "pods/requests", Namespaced: true}})
	want := []provider.CustomMetricInfo{
		{GroupResource: schema.GroupResource{Group: "batch", Resource: "jobs"}, Namespaced: true, Metric: "queue_length"},
		{GroupResource: schema.GroupResource{Resource: "namespaces"}, Metric: "requests"},
		{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "requests"},
	}
	if diff := cmp.Diff(want, unionInfos(member1, member2)); diff != "" {
		t.Errorf("unionInfos (-want +got):\n%s", diff)
	}
}
