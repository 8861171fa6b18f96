package cronfederatedhpa

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

var (
	deployment = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}
	hpa        = autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: "nginx"}
)

func cron(target autoscalingv2.CrossVersionObjectReference, rules ...autoscalingv1alpha1.CronFederatedHPARule) *autoscalingv1alpha1.CronFederatedHPA {
	return &autoscalingv1alpha1.CronFederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps"},
		Spec:       autoscalingv1alpha1.CronFederatedHPASpec{ScaleTargetRef: target, Rules: rules},
	}
}

func rule(name, schedule string, mutate ...func(*autoscalingv1alpha1.CronFederatedHPARule)) autoscalingv1alpha1.CronFederatedHPARule {
	r := autoscalingv1alpha1.CronFederatedHPARule{Name: name, Schedule: schedule}
	for _, m := range mutate {
		m(&r)
	}
	return r
}

func replicas(n int32) func(*autoscalingv1alpha1.CronFederatedHPARule) {
	return func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetReplicas = ptr.To(n) }
}

func bounds(minR, maxR *int32) func(*autoscalingv1alpha1.CronFederatedHPARule) {
	return func(r *autoscalingv1alpha1.CronFederatedHPARule) {
		r.TargetMinReplicas, r.TargetMaxReplicas = minR, maxR
	}
}

func zone(tz string) func(*autoscalingv1alpha1.CronFederatedHPARule) {
	return func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TimeZone = ptr.To(tz) }
}

func TestValidate(t *testing.T) {
	h := NewValidator(admissiontest.Decoder())
	tests := []struct {
		name string
		obj  *autoscalingv1alpha1.CronFederatedHPA
		want []string
	}{
		{name: "workload", obj: cron(deployment,
			rule("business-hours", "0 8 * * MON-FRI", replicas(10), zone("Europe/Paris")),
			rule("night", "@midnight", replicas(2)))},
		{name: "FederatedHPA bounds", obj: cron(hpa,
			rule("up", "30 7 * * 1-5", bounds(ptr.To[int32](5), ptr.To[int32](20))),
			rule("down", "*/15 20-23 * * *", bounds(nil, ptr.To[int32](5))))},
		{name: "duplicate rule names", obj: cron(deployment, rule("a", "@hourly", replicas(1)), rule("a", "@daily", replicas(1))),
			want: []string{"spec.rules[1].name"}},
		{name: "schedules that do not parse", obj: cron(deployment,
			rule("six-fields", "0 0 8 * * *", replicas(1)),
			rule("minute-60", "60 * * * *", replicas(1)),
			rule("tz-in-schedule", "TZ=UTC 0 8 * * *", replicas(1)),
			rule("unknown-macro", "@fortnightly", replicas(1)),
			rule("step-0", "*/0 * * * *", replicas(1))),
			want: []string{"spec.rules[0].schedule", "spec.rules[1].schedule", "spec.rules[2].schedule", "spec.rules[3].schedule", "spec.rules[4].schedule"}},
		{name: "time zones", obj: cron(deployment,
			rule("unknown", "@daily", replicas(1), zone("Mars/Olympus_Mons")),
			rule("local", "@daily", replicas(1), zone("Local")),
			rule("empty", "@daily", replicas(1), zone(""))),
			want: []string{"spec.rules[0].timeZone", "spec.rules[1].timeZone", "spec.rules[2].timeZone"}},
		{name: "workload rule without targetReplicas", obj: cron(deployment,
			rule("bounds-only", "@daily", bounds(ptr.To[int32](1), nil)),
			rule("negative", "@daily", replicas(-1))),
			want: []string{"spec.rules[0].targetReplicas", "spec.rules[1].targetReplicas"}},
		{name: "FederatedHPA rule without bounds", obj: cron(hpa,
			rule("replicas-only", "@daily", replicas(3)),
			rule("inverted", "@daily", bounds(ptr.To[int32](5), ptr.To[int32](2))),
			rule("zero", "@daily", bounds(ptr.To[int32](0), nil))),
			want: []string{"spec.rules[0].targetMinReplicas", "spec.rules[1].targetMaxReplicas", "spec.rules[2].targetMinReplicas"}},
		{name: "other kinds of the group cannot be scaled", obj: cron(
			autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "CronFederatedHPA", Name: "other"},
			rule("a", "@daily", replicas(1))),
			want: []string{"spec.scaleTargetRef.kind"}},
		{name: "scale target without name", obj: cron(autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment"},
			rule("a", "@daily", replicas(1))),
			want: []string{"spec.scaleTargetRef.name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), admissiontest.Want{Denied: tc.want})
		})
	}
}

func TestParseSchedule(t *testing.T) {
	bits := func(vs ...int) uint64 {
		var b uint64
		for _, v := range vs {
			b |= 1 << uint(v)
		}
		return b
	}
	span := func(lo, hi, step int) uint64 {
		var b uint64
		for v := lo; v <= hi; v += step {
			b |= 1 << uint(v)
		}
		return b
	}
	valid := []struct {
		spec string
		want Schedule
	}{
		{"* * * * *", Schedule{span(0, 59, 1), span(0, 23, 1), span(1, 31, 1), span(1, 12, 1), span(0, 6, 1)}},
		{"@weekly", Schedule{bits(0), bits(0), span(1, 31, 1), span(1, 12, 1), bits(0)}},
		{"5,35 9-17/2 ? jan,JUL mon-fri", Schedule{bits(5, 35), bits(9, 11, 13, 15, 17), span(1, 31, 1), bits(1, 7), span(1, 5, 1)}},
		{"10/20 0 1,15 */3 ?", Schedule{bits(10, 30, 50), bits(0), bits(1, 15), bits(1, 4, 7, 10), span(0, 6, 1)}},
		{"  0 12 * * SUN  ", Schedule{bits(0), bits(12), span(1, 31, 1), span(1, 12, 1), bits(0)}},
	}
	for _, tc := range valid {
		got, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.spec, got, tc.want)
		}
	}
	for _, spec := range []string{"", "* * * *", "* * * * * *", "0 24 * * *", "0 0 0 * *", "0 0 * 13 *", "0 0 * * 7",
		"5-1 * * * *", "a * * * *", "1,,2 * * * *", "? * * * *", "0 0 * ? *", "*/x * * * *", "@every 1h", "CRON_TZ=UTC @daily"} {
		if _, err := ParseSchedule(spec); err == nil {
			t.Errorf("%q parses, want an error", spec)
		}
	}
}
