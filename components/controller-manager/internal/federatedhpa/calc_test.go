package federatedhpa

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// podBuilder makes a running, ready pod requesting 1 CPU that started 10
// minutes ago (past the CPU initialisation period).
type podBuilder struct{ p MemberPod }

func pod(cluster, name string) *podBuilder {
	started := metav1.NewTime(now.Add(-10 * time.Minute))
	return &podBuilder{MemberPod{Cluster: cluster, Pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-9 * time.Minute))}}},
	}}}
}

func (b *podBuilder) phase(p corev1.PodPhase) *podBuilder { b.p.Pod.Status.Phase = p; return b }
func (b *podBuilder) deleting() *podBuilder {
	b.p.Pod.DeletionTimestamp = &metav1.Time{Time: now}
	return b
}
func (b *podBuilder) startedAgo(d time.Duration, readyAgo time.Duration, ready corev1.ConditionStatus) *podBuilder {
	b.p.Pod.Status.StartTime = &metav1.Time{Time: now.Add(-d)}
	b.p.Pod.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-readyAgo))
	b.p.Pod.Status.Conditions[0].Status = ready
	return b
}
func (b *podBuilder) noRequest() *podBuilder {
	b.p.Pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	return b
}

func pods(bs ...*podBuilder) []MemberPod {
	out := make([]MemberPod, len(bs))
	for i, b := range bs {
		out[i] = b.p
	}
	return out
}

// samples maps "cluster/name" (or "name" for an unknown cluster) to a
// value in millicores, sampled a minute ago over a minute.
func samples(values map[string]int64) PodMetrics {
	out := PodMetrics{}
	for k, v := range values {
		key := PodKey{Name: k}
		if cluster, name, ok := strings.Cut(k, "/"); ok {
			key = PodKey{Cluster: cluster, Name: name}
		}
		out[key] = PodMetric{Value: v, Timestamp: now.Add(-time.Minute), Window: time.Minute}
	}
	return out
}

func TestResourceUtilization(t *testing.T) {
	calc := Calculator{CPUInitializationPeriod: 5 * time.Minute, InitialReadinessDelay: 30 * time.Second, Now: now}
	tol := Tolerances{Down: 0.1, Up: 0.1}
	three := func() []MemberPod { return pods(pod("m1", "a"), pod("m1", "b"), pod("m2", "c")) }
	tests := []struct {
		name        string
		pods        []MemberPod
		metrics     PodMetrics
		target      int32
		current     int32
		calibration float64
		tol         Tolerances
		want        int32
		wantUtil    int32
		wantErr     bool
	}{
		{name: "above target scales up to ratio times ready pods",
			pods: three(), metrics: samples(map[string]int64{"m1/a": 900, "m1/b": 900, "m2/c": 900}), target: 50, current: 3, want: 6, wantUtil: 90},
		{name: "within tolerance keeps the count",
			pods: three(), metrics: samples(map[string]int64{"m1/a": 520, "m1/b": 520, "m2/c": 520}), target: 50, current: 3, want: 3, wantUtil: 52},
		{name: "below target scales down",
			pods: three(), metrics: samples(map[string]int64{"m1/a": 100, "m1/b": 100, "m2/c": 100}), target: 50, current: 3, want: 1, wantUtil: 10},
		{name: "a pod without a sample counts as using its whole request on a scale down",
			pods: three(), metrics: samples(map[string]int64{"m1/a": 100, "m1/b": 100}), target: 50, current: 3, want: 3, wantUtil: 10},
		{name: "a pod without a sample counts as idle on a scale up",
			pods: three(), metrics: samples(map[string]int64{"m1/a": 1000, "m1/b": 1000}), target: 50, current: 3, want: 4, wantUtil: 100},
		{name: "a pending pod counts as idle on a scale up",
			pods:    pods(pod("m1", "a"), pod("m1", "b"), pod("m2", "c").phase(corev1.PodPending)),
			metrics: samples(map[string]int64{"m1/a": 1000, "m1/b": 1000, "m2/c": 1000}), target: 50, current: 3, want: 4, wantUtil: 100},
		{name: "a starting pod's CPU sample from before it was ready a window long is left out",
			pods:    pods(pod("m1", "a"), pod("m1", "b"), pod("m2", "c").startedAgo(time.Minute, 30*time.Second, corev1.ConditionTrue)),
			metrics: samples(map[string]int64{"m1/a": 1000, "m1/b": 1000, "m2/c": 3000}), target: 50, current: 3, want: 4, wantUtil: 100},
		{name: "an initialised pod that has been ready once counts though unready now",
			pods:    pods(pod("m1", "a"), pod("m1", "b"), pod("m2", "c").startedAgo(10*time.Minute, 2*time.Minute, corev1.ConditionFalse)),
			metrics: samples(map[string]int64{"m1/a": 1000, "m1/b": 1000, "m2/c": 1000}), target: 50, current: 3, want: 6, wantUtil: 100},
		{name: "deleted and failed pods are ignored",
			pods:    pods(pod("m1", "a"), pod("m1", "b").deleting(), pod("m2", "c").phase(corev1.PodFailed)),
			metrics: samples(map[string]int64{"m1/a": 1000, "m1/b": 0, "m2/c": 0}), target: 50, current: 3, want: 2, wantUtil: 100},
		{name: "calibration makes up for the replicas of members not read",
			pods: pods(pod("m1", "a"), pod("m1", "b")), metrics: samples(map[string]int64{"m1/a": 1000, "m1/b": 1000}), target: 50, current: 4,
			calibration: 0.5, want: 8, wantUtil: 100},
		{name: "pods of the same name in two members are told apart by the sample's cluster",
			pods: pods(pod("m1", "a"), pod("m2", "a")), metrics: samples(map[string]int64{"m1/a": 1000, "m2/a": 200}), target: 50, current: 2, want: 3, wantUtil: 60},
		{name: "a sample of unknown cluster goes to the pod of its name",
			pods: pods(pod("m1", "a"), pod("m2", "b")), metrics: samples(map[string]int64{"a": 1000, "b": 1000}), target: 50, current: 2, want: 4, wantUtil: 100},
		{name: "the scale-up tolerance of the behavior holds back a small rise",
			pods: three(), metrics: samples(map[string]int64{"m1/a": 700, "m1/b": 700, "m2/c": 700}), target: 50, current: 3,
			tol: Tolerances{Down: 0.1, Up: 0.5}, want: 3, wantUtil: 70},
		{name: "a container without a request is an error",
			pods: pods(pod("m1", "a").noRequest()), metrics: samples(map[string]int64{"m1/a": 1000}), target: 50, current: 1, wantErr: true},
		{name: "no pods is an error",
			metrics: samples(map[string]int64{"m1/a": 1000}), target: 50, current: 1, wantErr: true},
		{name: "no sample of any ready pod is an error",
			pods: pods(pod("m1", "a").phase(corev1.PodPending)), metrics: samples(map[string]int64{"m1/a": 1000}), target: 50, current: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.calibration == 0 {
				tc.calibration = 1
			}
			if tc.tol == (Tolerances{}) {
				tc.tol = tol
			}
			got, util, _, err := calc.ResourceUtilization(tc.pods, tc.metrics, corev1.ResourceCPU, "", tc.target, tc.current, tc.calibration, tc.tol)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %d, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || util != tc.wantUtil {
				t.Errorf("got %d replicas at %d%%, want %d at %d%%", got, util, tc.want, tc.wantUtil)
			}
		})
	}
}

func TestAverageValue(t *testing.T) {
	calc := Calculator{Now: now}
	tol := Tolerances{Down: 0.1, Up: 0.1}
	tests := []struct {
		name    string
		pods    []MemberPod
		metrics PodMetrics
		target  int64
		want    int32
		wantAvg int64
	}{
		{"average above target", pods(pod("m1", "a"), pod("m2", "b")), samples(map[string]int64{"a": 300, "b": 300}), 100, 6, 300},
		{"average within tolerance", pods(pod("m1", "a"), pod("m2", "b")), samples(map[string]int64{"a": 105, "b": 95}), 100, 2, 100},
		// Missing on a scale down counts as exactly the target.
		{"missing sample on a scale down", pods(pod("m1", "a"), pod("m2", "b"), pod("m2", "c")), samples(map[string]int64{"a": 10, "b": 10}), 100, 2, 10},
	}
	for _, tc := range tests {
		got, avg, err := calc.AverageValue(tc.pods, tc.metrics, "", tc.target, int32(len(tc.pods)), 1, tol)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want || avg != tc.wantAvg {
			t.Errorf("%s: got %d replicas at %d, want %d at %d", tc.name, got, avg, tc.want, tc.wantAvg)
		}
	}
}

func TestRatioAndPerPod(t *testing.T) {
	calc := Calculator{Now: now}
	tol := Tolerances{Down: 0.1, Up: 0.1}
	ready := pods(pod("m1", "a"), pod("m2", "b"), pod("m2", "c").phase(corev1.PodPending))
	for _, tc := range []struct {
		name    string
		ratio   float64
		current int32
		want    int32
	}{
		{"twice the target doubles the ready pods", 2, 3, 4},
		{"within tolerance keeps the count", 1.05, 3, 3},
		{"from zero, the ratio itself", 2.5, 0, 3},
	} {
		got, err := calc.Ratio(ready, tc.ratio, tc.current, 1, tol)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %d, %v, want %d", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name          string
		status        int32
		total, target int64
		want          int32
		wantPer       int64
	}{
		{"total over target per replica", 3, 900, 100, 9, 300},
		{"within tolerance keeps the count", 3, 310, 100, 3, 104},
	} {
		got, per := PerPod(tc.status, tc.total, tc.target, tol)
		if got != tc.want || per != tc.wantPer {
			t.Errorf("%s: got %d at %d, want %d at %d", tc.name, got, per, tc.want, tc.wantPer)
		}
	}
}
