package scheduler

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/internal/federatedquota"
)

func TestBuildSpecPatch(t *testing.T) {
	rb := scheduled(fixture.Binding("x").Replicas(3).Weighted().Scheduled(fixture.T("b", 1), fixture.T("a", 2)))
	rb.ResourceVersion = "42"
	b, _ := AsBinding(rb)
	placement := rb.Annotations["policy.karmada.io/applied-placement"]

	patch, err := buildSpecPatch(b, []workv1alpha2.TargetCluster{fixture.T("a", 2), fixture.T("b", 1)}, placement)
	if err != nil || patch != nil {
		t.Errorf("same schedule in another order should need no write, got %s, %v", patch, err)
	}
	patch, err = buildSpecPatch(b, []workv1alpha2.TargetCluster{fixture.T("a", 3)}, placement)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"resourceVersion":"42","annotations":{"policy.karmada.io/applied-placement":` +
		`"{\"replicaScheduling\":{\"replicaSchedulingType\":\"Divided\",\"replicaDivisionPreference\":\"Weighted\"}}"},"managedFields":[{}]},` +
		`"spec":{"clusters":[{"name":"a","replicas":3}]}}`
	if diff := cmp.Diff(want, string(patch)); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	patch, _ = buildSpecPatch(b, nil, placement)
	if want := `"spec":{"clusters":null}`; !strings.Contains(string(patch), want) {
		t.Errorf("an empty schedule must remove the list: %s", patch)
	}
}

func TestConditionFor(t *testing.T) {
	tests := []struct {
		err    error
		status metav1.ConditionStatus
		reason string
	}{
		{nil, metav1.ConditionTrue, workv1alpha2.BindingReasonSuccess},
		{&framework.FitError{NumAllClusters: 1}, metav1.ConditionFalse, workv1alpha2.BindingReasonNoClusterFit},
		{framework.Unschedulablef("no room"), metav1.ConditionFalse, workv1alpha2.BindingReasonUnschedulable},
		{errors.New("boom"), metav1.ConditionFalse, workv1alpha2.BindingReasonSchedulerError},
		// The webhook's refusal of a placement over a FederatedResourceQuota.
		{&apierrors.StatusError{ErrStatus: metav1.Status{Code: http.StatusForbidden, Reason: federatedquota.ExceededReason, Message: "over quota"}},
			metav1.ConditionFalse, workv1alpha2.BindingReasonQuotaExceeded},
		{apierrors.NewForbidden(workv1alpha2.GroupVersion.WithResource("resourcebindings").GroupResource(), "x", errors.New("no")),
			metav1.ConditionFalse, workv1alpha2.BindingReasonSchedulerError},
	}
	for _, tc := range tests {
		c := conditionFor(tc.err, 7)
		if c.Status != tc.status || c.Reason != tc.reason || c.ObservedGeneration != 7 || c.Type != workv1alpha2.Scheduled {
			t.Errorf("conditionFor(%v) = %+v", tc.err, c)
		}
	}
}

func TestBuildStatusPatch(t *testing.T) {
	old := statusFields{observedGeneration: 2, conditions: []metav1.Condition{{Type: "FullyApplied", Status: metav1.ConditionTrue}}}
	if p, _ := buildStatusPatch(old, old, "1"); p != nil {
		t.Errorf("unchanged status written: %s", p)
	}
	next := old
	next.observedGeneration = 3
	next.conditions = withCondition(old.conditions, conditionFor(nil, 3))
	p, err := buildStatusPatch(old, next, "9")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"resourceVersion":"9"`, `"schedulerObservedGeneration":3`, `"type":"FullyApplied"`, `"type":"Scheduled"`, `"schedulerObservingAffinityName":null`} {
		if !strings.Contains(string(p), want) {
			t.Errorf("patch lacks %s: %s", want, p)
		}
	}
	if len(old.conditions) != 1 {
		t.Error("withCondition modified its input")
	}
}
