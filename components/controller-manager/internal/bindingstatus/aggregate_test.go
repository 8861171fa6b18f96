package bindingstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
)

var deploymentRef = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "nginx"}

// work builds a Work with one manifest and the given status.
func work(applied *metav1.Condition, statuses ...workv1alpha1.ManifestStatus) *workv1alpha1.Work {
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-m1", Name: "nginx-687f7fb96f"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment"}`)}},
		}}},
		Status: workv1alpha1.WorkStatus{ManifestStatuses: statuses},
	}
	if applied != nil {
		w.Status.Conditions = []metav1.Condition{*applied}
	}
	return w
}

func appliedCond(status metav1.ConditionStatus, reason, message string) *metav1.Condition {
	return &metav1.Condition{Type: workv1alpha1.WorkApplied, Status: status, Reason: reason, Message: message}
}

func manifestStatus(group, kind string, ordinal int, health workv1alpha1.ResourceHealth, status string) workv1alpha1.ManifestStatus {
	ms := workv1alpha1.ManifestStatus{
		Identifier: workv1alpha1.ResourceIdentifier{Ordinal: ordinal, Group: group, Version: "v1", Kind: kind, Namespace: "apps", Name: "nginx"},
		Health:     health,
	}
	if status != "" {
		ms.Status = &runtime.RawExtension{Raw: []byte(status)}
	}
	return ms
}

func TestItemFor(t *testing.T) {
	readyStatus := `{"readyReplicas":2,"replicas":2}`
	deleting := work(appliedCond(metav1.ConditionTrue, "AppliedSuccessful", ""))
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	tests := []struct {
		name string
		work *workv1alpha1.Work
		want workv1alpha2.AggregatedStatusItem
	}{
		{
			name: "no Work",
			want: workv1alpha2.AggregatedStatusItem{ClusterName: "m1", Health: "Unknown", AppliedMessage: messageNoWork},
		},
		{
			name: "Work being deleted",
			work: deleting,
			want: workv1alpha2.AggregatedStatusItem{ClusterName: "m1", Health: "Unknown", AppliedMessage: messageWorkDeleting},
		},
		{
			name: "not applied yet",
			work: work(nil),
			want: workv1alpha2.AggregatedStatusItem{ClusterName: "m1", Health: "Unknown", AppliedMessage: messageNotApplied},
		},
		{
			name: "apply failed: the reason, no status",
			work: work(appliedCond(metav1.ConditionFalse, "AppliedFailed", "conflict: object exists"),
				manifestStatus("apps", "Deployment", 0, "Healthy", readyStatus)),
			want: workv1alpha2.AggregatedStatusItem{ClusterName: "m1", Health: "Unknown", AppliedMessage: "conflict: object exists"},
		},
		{
			name: "apply failed without a message: the reason",
			work: work(appliedCond(metav1.ConditionUnknown, "Pending", "")),
			want: workv1alpha2.AggregatedStatusItem{ClusterName: "m1", Health: "Unknown", AppliedMessage: "Pending"},
		},
		{
			name: "applied, no status reflected yet",
			work: work(appliedCond(metav1.ConditionTrue, "AppliedSuccessful", "")),
			want: workv1alpha2.AggregatedStatusItem{ClusterName: "m1", Applied: true, Health: "Unknown"},
		},
		{
			name: "applied and healthy",
			work: work(appliedCond(metav1.ConditionTrue, "AppliedSuccessful", ""),
				manifestStatus("apps", "Deployment", 0, "Healthy", readyStatus)),
			want: workv1alpha2.AggregatedStatusItem{
				ClusterName: "m1", Applied: true, Health: "Healthy",
				Status: &runtime.RawExtension{Raw: []byte(readyStatus)},
			},
		},
		{
			name: "the template's manifest is found by identifier",
			work: work(appliedCond(metav1.ConditionTrue, "AppliedSuccessful", ""),
				manifestStatus("", "ConfigMap", 0, "Healthy", `{}`),
				manifestStatus("apps", "Deployment", 1, "Unhealthy", readyStatus)),
			want: workv1alpha2.AggregatedStatusItem{
				ClusterName: "m1", Applied: true, Health: "Unhealthy",
				Status: &runtime.RawExtension{Raw: []byte(readyStatus)},
			},
		},
		{
			name: "empty health is Unknown",
			work: work(appliedCond(metav1.ConditionTrue, "AppliedSuccessful", ""),
				manifestStatus("apps", "Deployment", 0, "", readyStatus)),
			want: workv1alpha2.AggregatedStatusItem{
				ClusterName: "m1", Applied: true, Health: "Unknown",
				Status: &runtime.RawExtension{Raw: []byte(readyStatus)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := itemFor("m1", tt.work, deploymentRef)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("itemFor (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFullyApplied(t *testing.T) {
	ok := func(c string) workv1alpha2.AggregatedStatusItem {
		return workv1alpha2.AggregatedStatusItem{ClusterName: c, Applied: true}
	}
	failed := func(c, msg string) workv1alpha2.AggregatedStatusItem {
		return workv1alpha2.AggregatedStatusItem{ClusterName: c, AppliedMessage: msg}
	}
	tests := []struct {
		name  string
		items []workv1alpha2.AggregatedStatusItem
		want  metav1.Condition
	}{
		{
			name:  "every cluster applied",
			items: []workv1alpha2.AggregatedStatusItem{ok("m1"), ok("m2")},
			want:  metav1.Condition{Status: "True", Reason: "FullyAppliedSuccess", Message: "All works have been successfully applied"},
		},
		{
			name:  "one cluster not applied",
			items: []workv1alpha2.AggregatedStatusItem{ok("m1"), failed("m2", "conflict")},
			want:  metav1.Condition{Status: "False", Reason: "FullyAppliedFailed", Message: "Not applied in 1 of 2 clusters: m2 (conflict)"},
		},
		{
			name:  "none applied",
			items: []workv1alpha2.AggregatedStatusItem{failed("m1", ""), failed("m2", messageNoWork)},
			want: metav1.Condition{Status: "False", Reason: "FullyAppliedFailed",
				Message: "Not applied in 2 of 2 clusters: m1; m2 (Work not created yet)"},
		},
		{
			name: "not scheduled",
			want: metav1.Condition{Status: "False", Reason: "FullyAppliedFailed", Message: "Not scheduled to any cluster"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fullyApplied(tt.items, 7)
			tt.want.Type, tt.want.ObservedGeneration = "FullyApplied", 7
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("fullyApplied (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSameItems(t *testing.T) {
	item := func(raw string) workv1alpha2.AggregatedStatusItem {
		it := workv1alpha2.AggregatedStatusItem{ClusterName: "m1", Applied: true, Health: "Healthy"}
		if raw != "" {
			it.Status = &runtime.RawExtension{Raw: []byte(raw)}
		}
		return it
	}
	tests := []struct {
		name string
		a, b []workv1alpha2.AggregatedStatusItem
		want bool
	}{
		{"both empty", nil, []workv1alpha2.AggregatedStatusItem{}, true},
		{"same bytes", []workv1alpha2.AggregatedStatusItem{item(`{"a":1}`)}, []workv1alpha2.AggregatedStatusItem{item(`{"a":1}`)}, true},
		{"re-encoded", []workv1alpha2.AggregatedStatusItem{item(`{"a":1,"b":2}`)}, []workv1alpha2.AggregatedStatusItem{item(`{"b": 2, "a": 1}`)}, true},
		{"status differs", []workv1alpha2.AggregatedStatusItem{item(`{"a":1}`)}, []workv1alpha2.AggregatedStatusItem{item(`{"a":2}`)}, false},
		{"status appears", []workv1alpha2.AggregatedStatusItem{item("")}, []workv1alpha2.AggregatedStatusItem{item(`{"a":1}`)}, false},
		{"health differs", []workv1alpha2.AggregatedStatusItem{item("")}, []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: "Unknown"}}, false},
		{"cluster added", []workv1alpha2.AggregatedStatusItem{item("")}, []workv1alpha2.AggregatedStatusItem{item(""), item("")}, false},
	}
	for _, tt := range tests {
		if got := sameItems(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: sameItems = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSameValue(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{map[string]any{"n": int64(3)}, map[string]any{"n": float64(3)}, true},
		{map[string]any{"n": int64(3)}, map[string]any{"n": int64(4)}, false},
		{nil, nil, true},
		{nil, map[string]any{}, false},
		{map[string]any{"a": []any{"x"}}, map[string]any{"a": []any{"x"}}, true},
	}
	for _, tt := range tests {
		if got := sameValue(tt.a, tt.b); got != tt.want {
			t.Errorf("sameValue(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSettling(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	grace := time.Minute
	fresh := func() binding.View {
		return binding.ViewOf(&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}})
	}
	reported := func() binding.View {
		v := fresh()
		v.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1"}}
		return v
	}
	applied := workv1alpha2.AggregatedStatusItem{ClusterName: "m1", Applied: true}
	noWork := workv1alpha2.AggregatedStatusItem{ClusterName: "m2", AppliedMessage: messageNoWork}
	notApplied := workv1alpha2.AggregatedStatusItem{ClusterName: "m2", AppliedMessage: messageNotApplied}
	failed := workv1alpha2.AggregatedStatusItem{ClusterName: "m2", AppliedMessage: "conflict"}
	tests := []struct {
		name  string
		v     binding.View
		items []workv1alpha2.AggregatedStatusItem
		after time.Duration
		want  bool
	}{
		{"not scheduled yet", fresh(), nil, time.Second, true},
		{"Work not created yet", fresh(), []workv1alpha2.AggregatedStatusItem{applied, noWork}, time.Second, true},
		{"Work not applied yet", fresh(), []workv1alpha2.AggregatedStatusItem{applied, notApplied}, time.Second, true},
		{"all applied: write", fresh(), []workv1alpha2.AggregatedStatusItem{applied}, time.Second, false},
		{"a failure: write at once", fresh(), []workv1alpha2.AggregatedStatusItem{noWork, failed}, time.Second, false},
		{"grace over: write what there is", fresh(), []workv1alpha2.AggregatedStatusItem{noWork}, grace, false},
		{"reported before: every change is written", reported(), []workv1alpha2.AggregatedStatusItem{noWork}, time.Second, false},
	}
	for _, tt := range tests {
		if got := settling(tt.v, tt.items, created.Add(tt.after), grace); got != tt.want {
			t.Errorf("%s: settling = %v, want %v", tt.name, got, tt.want)
		}
	}
}
