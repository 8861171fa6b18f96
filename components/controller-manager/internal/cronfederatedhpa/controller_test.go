package cronfederatedhpa_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cronfederatedhpa"
	"github.com/flotilla-io/flotilla/internal/controllertest"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) {
	scheme, err := controllertest.NewScheme()
	if err == nil {
		err = autoscalingv1alpha1.AddToScheme(scheme)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(controllertest.Main(m, &server, scheme))
}

func TestSchedule(t *testing.T) {
	from := time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)
	tests := []struct {
		schedule, tz string
		want         time.Time
	}{
		{"*/15 * * * *", "", time.Date(2026, 3, 1, 10, 45, 0, 0, time.UTC)},
		// 09:00 in Tokyo is 00:00 UTC, already past on March 1st.
		{"0 9 * * *", "Asia/Tokyo", time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{"0 12 * * *", "Europe/Paris", time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)},
		{"@hourly", "UTC", time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		rule := autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: tc.schedule}
		if tc.tz != "" {
			rule.TimeZone = ptr.To(tc.tz)
		}
		s, loc, err := cronfederatedhpa.Schedule(rule)
		if tc.tz == "" {
			loc = time.UTC // the controller's local zone; the test's reference is UTC
		}
		if err != nil {
			t.Fatalf("%s %s: %v", tc.schedule, tc.tz, err)
		}
		if got := s.Next(from.In(loc)); !got.Equal(tc.want) {
			t.Errorf("%s in %q: next %s, want %s", tc.schedule, tc.tz, got.UTC(), tc.want)
		}
	}
	for _, bad := range []autoscalingv1alpha1.CronFederatedHPARule{
		{Name: "r", Schedule: "61 * * * *"},
		{Name: "r", Schedule: "* * * * *", TimeZone: ptr.To("Nowhere/Never")},
	} {
		if _, _, err := cronfederatedhpa.Schedule(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// start runs the controller on a clock of its own and returns aim, which
// sets that clock a few seconds short of a minute: every-minute rules
// created right after fire within seconds, not up to a minute later.
func start(t *testing.T) (aim func()) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		if err := autoscalingv1alpha1.AddToScheme(mgr.GetScheme()); err != nil {
			return err
		}
		return (&cronfederatedhpa.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(cronfederatedhpa.ControllerName), Now: now}).SetupWithManager(mgr)
	})
	return func() {
		real := time.Now()
		offset.Store(int64(real.Truncate(time.Minute).Add(time.Minute - 5*time.Second).Sub(real)))
	}
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}},
		},
	}
}

func cronOf(ns, name string, target autoscalingv2.CrossVersionObjectReference, rules ...autoscalingv1alpha1.CronFederatedHPARule) *autoscalingv1alpha1.CronFederatedHPA {
	return &autoscalingv1alpha1.CronFederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       autoscalingv1alpha1.CronFederatedHPASpec{ScaleTargetRef: target, Rules: rules},
	}
}

func historyOf(ctx context.Context, key client.ObjectKey, rule string) (*autoscalingv1alpha1.ExecutionHistory, error) {
	c := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := server.Client.Get(ctx, key, c); err != nil {
		return nil, err
	}
	for i := range c.Status.ExecutionHistories {
		if c.Status.ExecutionHistories[i].RuleName == rule {
			return &c.Status.ExecutionHistories[i], nil
		}
	}
	return nil, nil
}

func TestRules(t *testing.T) {
	aim := start(t)
	ctx := t.Context()
	const ns = "default"
	for _, obj := range []client.Object{
		deployment(ns, "web", 1),
		&autoscalingv1alpha1.FederatedHPA{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
			Spec: autoscalingv1alpha1.FederatedHPASpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"},
				MinReplicas:    ptr.To[int32](1), MaxReplicas: 5,
			},
		},
	} {
		if err := server.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	everyMinute := func(name string) autoscalingv1alpha1.CronFederatedHPARule {
		return autoscalingv1alpha1.CronFederatedHPARule{Name: name, Schedule: "* * * * *"}
	}
	up := everyMinute("up")
	up.TargetReplicas = ptr.To[int32](3)
	paused := everyMinute("paused")
	paused.TargetReplicas = ptr.To[int32](9)
	paused.Suspend = ptr.To(true)
	workload := cronOf(ns, "web", autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, up, paused)

	bounds := everyMinute("bounds")
	bounds.TargetMinReplicas, bounds.TargetMaxReplicas = ptr.To[int32](2), ptr.To[int32](8)
	bounds.TimeZone = ptr.To("Asia/Tokyo")
	fhpa := cronOf(ns, "api", autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: "api"}, bounds)

	missing := everyMinute("up")
	missing.TargetReplicas = ptr.To[int32](2)
	missing.FailedHistoryLimit = ptr.To[int32](1)
	broken := cronOf(ns, "missing", autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "missing"}, missing)
	aim()
	for _, obj := range []client.Object{workload, fhpa, broken} {
		if err := server.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	controllertest.WaitFor(t, "web scaled to 3 at the minute", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		err := server.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)
		return err == nil && *d.Spec.Replicas == 3, err
	})
	controllertest.WaitFor(t, "web's success recorded", func(ctx context.Context) (bool, error) {
		h, err := historyOf(ctx, client.ObjectKeyFromObject(workload), "up")
		return err == nil && h != nil && len(h.SuccessfulExecutions) == 1, err
	})
	h, err := historyOf(ctx, client.ObjectKeyFromObject(workload), "up")
	if err != nil {
		t.Fatal(err)
	}
	s := h.SuccessfulExecutions[0]
	if ptr.Deref(s.AppliedReplicas, 0) != 3 || s.ScheduleTime.Second() != 0 || s.ExecutionTime.Before(s.ScheduleTime) {
		t.Errorf("successful execution %+v", s)
	}
	if h.NextExecutionTime == nil || !h.NextExecutionTime.Equal(&metav1.Time{Time: s.ScheduleTime.Add(time.Minute)}) {
		t.Errorf("next execution %v, want a minute after %v", h.NextExecutionTime, s.ScheduleTime)
	}
	if p, err := historyOf(ctx, client.ObjectKeyFromObject(workload), "paused"); err != nil || p == nil || p.NextExecutionTime != nil || len(p.SuccessfulExecutions) != 0 {
		t.Errorf("a suspended rule: %+v, %v", p, err)
	}

	controllertest.WaitFor(t, "api's bounds set", func(ctx context.Context) (bool, error) {
		f := &autoscalingv1alpha1.FederatedHPA{}
		err := server.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api"}, f)
		return err == nil && *f.Spec.MinReplicas == 2 && f.Spec.MaxReplicas == 8, err
	})
	controllertest.WaitFor(t, "api's success recorded with its bounds", func(ctx context.Context) (bool, error) {
		h, err := historyOf(ctx, client.ObjectKeyFromObject(fhpa), "bounds")
		return err == nil && h != nil && len(h.SuccessfulExecutions) == 1 &&
			ptr.Deref(h.SuccessfulExecutions[0].AppliedMinReplicas, 0) == 2 && ptr.Deref(h.SuccessfulExecutions[0].AppliedMaxReplicas, 0) == 8, err
	})

	controllertest.WaitFor(t, "the failure on a missing target recorded", func(ctx context.Context) (bool, error) {
		h, err := historyOf(ctx, client.ObjectKeyFromObject(broken), "up")
		return err == nil && h != nil && len(h.FailedExecutions) == 1 && h.FailedExecutions[0].Message != "", err
	})

	// A rule that cannot start (a time zone the webhook would have
	// refused) says so, and never runs.
	nowhere := everyMinute("nowhere")
	nowhere.TargetReplicas = ptr.To[int32](7)
	nowhere.TimeZone = ptr.To("Nowhere/Never")
	lost := cronOf(ns, "lost", autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, nowhere)
	if err := server.Client.Create(ctx, lost); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "a StartRuleFailed event", func(ctx context.Context) (bool, error) {
		var list corev1.EventList
		if err := server.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == "lost" && e.Reason == cronfederatedhpa.ReasonStartRuleFailed {
				return true, nil
			}
		}
		return false, nil
	})
	if h, err := historyOf(ctx, client.ObjectKeyFromObject(lost), "nowhere"); err != nil || (h != nil && h.NextExecutionTime != nil) {
		t.Errorf("a rule that could not start has a next execution: %+v, %v", h, err)
	}

	// A rule removed takes its history with it.
	c := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := server.Client.Get(ctx, client.ObjectKeyFromObject(workload), c); err != nil {
		t.Fatal(err)
	}
	c.Spec.Rules = c.Spec.Rules[:1]
	if err := server.Client.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the removed rule's history gone", func(ctx context.Context) (bool, error) {
		h, err := historyOf(ctx, client.ObjectKeyFromObject(workload), "paused")
		return err == nil && h == nil, err
	})
}
