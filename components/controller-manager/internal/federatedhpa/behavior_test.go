package federatedhpa

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func TestStabilizeDown(t *testing.T) {
	recs := []recommendation{{8, ago(4 * time.Minute)}, {6, ago(2 * time.Minute)}, {9, ago(6 * time.Minute)}}
	got, kept := stabilizeDown(recs, 3, 5*time.Minute, now)
	if got != 8 {
		t.Errorf("got %d, want 8: the highest recommendation of the last 5 minutes", got)
	}
	// The recommendation older than the window gives its slot to the new one.
	want := []recommendation{{8, ago(4 * time.Minute)}, {6, ago(2 * time.Minute)}, {3, now}}
	if diff := cmp.Diff(want, kept, cmp.AllowUnexported(recommendation{})); diff != "" {
		t.Errorf("recommendations (-want +got):\n%s", diff)
	}
	if got, _ := stabilizeDown(nil, 3, 5*time.Minute, now); got != 3 {
		t.Errorf("without history got %d, want 3", got)
	}
}

func TestStabilize(t *testing.T) {
	recs := []recommendation{{5, ago(30 * time.Second)}, {9, ago(90 * time.Second)}}
	tests := []struct {
		name             string
		desired, current int32
		up, down         time.Duration
		want             limit
	}{
		{"scale up on the lowest recommendation of the up window", 10, 4, time.Minute, 0,
			limit{5, ReasonScaleUpStabilized, "recent recommendations were lower than current one, applying the lowest recent recommendation"}},
		{"no up window scales up at once", 10, 4, 0, 0,
			limit{10, ReasonScaleUpStabilized, "recent recommendations were lower than current one, applying the lowest recent recommendation"}},
		{"scale down to the highest recommendation of the down window", 2, 10, 0, 2 * time.Minute,
			limit{9, ReasonScaleDownStabilized, "recent recommendations were higher than current one, applying the highest recent recommendation"}},
		{"never past current", 2, 4, 0, 2 * time.Minute,
			limit{4, ReasonScaleDownStabilized, "recent recommendations were higher than current one, applying the highest recent recommendation"}},
	}
	for _, tc := range tests {
		got, _ := stabilize(append([]recommendation(nil), recs...), tc.desired, tc.current, tc.up, tc.down, now)
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(limit{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestLimitWithoutBehavior(t *testing.T) {
	tests := []struct {
		current, desired, min, max int32
		want                       limit
	}{
		{1, 10, 1, 20, limit{4, ReasonScaleUpLimit, "the desired replica count is increasing faster than the maximum scale rate"}},
		{5, 30, 1, 20, limit{10, ReasonScaleUpLimit, "the desired replica count is increasing faster than the maximum scale rate"}},
		{5, 30, 1, 8, limit{8, ReasonTooManyReplicas, "the desired replica count is more than the maximum replica count"}},
		{5, 1, 2, 8, limit{2, ReasonTooFewReplicas, "the desired replica count is less than the minimum replica count"}},
		{5, 7, 2, 8, limit{7, ReasonDesiredWithinRange, "the desired count is within the acceptable range"}},
	}
	for _, tc := range tests {
		got := limitWithoutBehavior(tc.current, tc.desired, tc.min, tc.max)
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(limit{})); diff != "" {
			t.Errorf("%d→%d in [%d,%d] (-want +got):\n%s", tc.current, tc.desired, tc.min, tc.max, diff)
		}
	}
}

func rules(sel autoscalingv2.ScalingPolicySelect, policies ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(sel), Policies: policies}
}

func pods4(period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: period}
}

func percent(v, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: v, PeriodSeconds: period}
}

func TestScaleLimits(t *testing.T) {
	recentUp := []scaleEvent{{change: 3, at: ago(30 * time.Second)}, {change: 5, at: ago(5 * time.Minute)}}
	recentDown := []scaleEvent{{change: -2, at: ago(10 * time.Second)}}
	tests := []struct {
		name    string
		current int32
		ups     []scaleEvent
		downs   []scaleEvent
		up      *autoscalingv2.HPAScalingRules
		wantUp  int32
		down    *autoscalingv2.HPAScalingRules
		want    int32
	}{
		{name: "Max picks the policy allowing the most: 100% of 10", current: 10,
			up: rules(autoscalingv2.MaxChangePolicySelect, pods4(60), percent(100, 60)), wantUp: 20,
			down: rules(autoscalingv2.MaxChangePolicySelect, pods4(60), percent(50, 60)), want: 5},
		{name: "Min picks the policy allowing the least", current: 10,
			up: rules(autoscalingv2.MinChangePolicySelect, pods4(60), percent(100, 60)), wantUp: 14,
			down: rules(autoscalingv2.MinChangePolicySelect, pods4(60), percent(50, 60)), want: 6},
		{name: "Disabled allows no change", current: 10,
			up: rules(autoscalingv2.DisabledPolicySelect, pods4(60)), wantUp: 10,
			down: rules(autoscalingv2.DisabledPolicySelect, pods4(60)), want: 10},
		// 10 now, 3 added and 2 removed within the minute: the period
		// started at 9.
		{name: "changes within the period count from where it started", current: 10, ups: recentUp, downs: recentDown,
			up: rules(autoscalingv2.MaxChangePolicySelect, pods4(60)), wantUp: 13,
			down: rules(autoscalingv2.MaxChangePolicySelect, pods4(60)), want: 5},
	}
	for _, tc := range tests {
		if got := scaleUpLimit(tc.current, tc.ups, tc.downs, tc.up, now); got != tc.wantUp {
			t.Errorf("%s: scale-up limit %d, want %d", tc.name, got, tc.wantUp)
		}
		if got := scaleDownLimit(tc.current, tc.ups, tc.downs, tc.down, now); got != tc.want {
			t.Errorf("%s: scale-down limit %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestLimitWithBehavior(t *testing.T) {
	b := withDefaults(&autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: rules(autoscalingv2.MaxChangePolicySelect, autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}),
	}, 5*time.Minute)
	if got := *b.ScaleDown.StabilizationWindowSeconds; got != 300 {
		t.Errorf("scale-down window %d, want the controller's 300", got)
	}
	tests := []struct {
		current, desired, min, max int32
		downs                      []scaleEvent
		want                       limit
	}{
		// Kubernetes' default scale up: 4 pods or 100% per 15s, the larger.
		{3, 20, 1, 30, nil, limit{7, ReasonScaleUpLimit, "the desired replica count is increasing faster than the maximum scale rate"}},
		{3, 20, 1, 5, nil, limit{5, ReasonTooManyReplicas, "the desired replica count is more than the maximum replica count"}},
		{9, 3, 1, 10, nil, limit{8, ReasonScaleDownLimit, "the desired replica count is decreasing faster than the maximum scale rate"}},
		// One pod down within the minute already: none more.
		{8, 3, 1, 10, []scaleEvent{{change: -1, at: ago(20 * time.Second)}}, limit{8, ReasonScaleDownLimit, "the desired replica count is decreasing faster than the maximum scale rate"}},
		{9, 8, 8, 10, nil, limit{8, ReasonDesiredWithinRange, "the desired count is within the acceptable range"}},
		{9, 3, 9, 10, nil, limit{9, ReasonTooFewReplicas, "the desired replica count is less than the minimum replica count"}},
	}
	for _, tc := range tests {
		got := limitWithBehavior(tc.current, tc.desired, tc.min, tc.max, nil, tc.downs, b, now)
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(limit{})); diff != "" {
			t.Errorf("%d→%d in [%d,%d] (-want +got):\n%s", tc.current, tc.desired, tc.min, tc.max, diff)
		}
	}
}

func TestRecordEvent(t *testing.T) {
	events := []scaleEvent{{change: 2, at: ago(2 * time.Minute)}, {change: 1, at: ago(10 * time.Second)}}
	got := recordEvent(events, 4, time.Minute, now)
	want := []scaleEvent{{change: 4, at: now}, {change: 1, at: ago(10 * time.Second)}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(scaleEvent{})); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
