package workstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configmaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func TestUsage(t *testing.T) {
	a := types.NamespacedName{Namespace: "karmada-es-m1", Name: "a"}
	b := types.NamespacedName{Namespace: "karmada-es-m1", Name: "b"}
	m1Deploy := memberResource{cluster: "m1", gvr: deployments}
	m1CM := memberResource{cluster: "m1", gvr: configmaps}
	m2Deploy := memberResource{cluster: "m2", gvr: deployments}

	u := newUsage()
	steps := []struct {
		name       string
		do         func() []memberResource
		wantUnused []memberResource
		needed     []memberResource
		notNeeded  []memberResource
	}{
		{"a uses deployments twice and configmaps", func() []memberResource {
			return u.set(a, []memberResource{m1Deploy, m1CM, m1Deploy})
		}, nil, []memberResource{m1Deploy, m1CM}, []memberResource{m2Deploy}},
		{"b uses deployments", func() []memberResource { return u.set(b, []memberResource{m1Deploy}) }, nil, []memberResource{m1Deploy}, nil},
		{"a drops configmaps", func() []memberResource { return u.set(a, []memberResource{m1Deploy}) },
			[]memberResource{m1CM}, []memberResource{m1Deploy}, []memberResource{m1CM}},
		{"a again, unchanged", func() []memberResource { return u.set(a, []memberResource{m1Deploy}) }, nil, []memberResource{m1Deploy}, nil},
		{"a goes: b still uses deployments", func() []memberResource { return u.forget(a) }, nil, []memberResource{m1Deploy}, nil},
		{"a forgotten twice", func() []memberResource { return u.forget(a) }, nil, []memberResource{m1Deploy}, nil},
		{"b needs nothing any more", func() []memberResource { return u.set(b, nil) }, []memberResource{m1Deploy}, nil, []memberResource{m1Deploy}},
		{"b goes after that", func() []memberResource { return u.forget(b) }, nil, nil, nil},
	}
	for _, s := range steps {
		got := s.do()
		if diff := cmp.Diff(s.wantUnused, got, cmp.AllowUnexported(memberResource{})); diff != "" {
			t.Errorf("%s: unused (-want +got):\n%s", s.name, diff)
		}
		for _, r := range s.needed {
			if !u.needed(r) {
				t.Errorf("%s: %v not needed", s.name, r)
			}
		}
		for _, r := range s.notNeeded {
			if u.needed(r) {
				t.Errorf("%s: %v still needed", s.name, r)
			}
		}
	}
	if len(u.works) != 0 || len(u.users) != 0 {
		t.Errorf("leftovers: %v %v", u.works, u.users)
	}
}

func TestDispatched(t *testing.T) {
	applied := func(status metav1.ConditionStatus, gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: status, ObservedGeneration: gen}}
	}
	now := metav1.Now()
	tests := []struct {
		name string
		work workv1alpha1.Work
		want bool
	}{
		{"applied", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionTrue, 2)}}, true},
		{"not applied yet", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, false},
		{"apply failed", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionFalse, 2)}}, false},
		{"older spec applied", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionTrue, 2)}}, false},
		{"suspended", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true)},
			Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionTrue, 2)}}, false},
		{"deleting", workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2, DeletionTimestamp: &now},
			Status: workv1alpha1.WorkStatus{Conditions: applied(metav1.ConditionTrue, 2)}}, false},
	}
	for _, tt := range tests {
		if got := dispatched(&tt.work); got != tt.want {
			t.Errorf("%s: dispatched = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDrifted(t *testing.T) {
	tests := []struct {
		s    memberState
		want bool
	}{
		{memberState{}, true}, // deleted behind our back
		{memberState{found: true, managed: true, inSync: true}, false},   // as applied
		{memberState{found: true, managed: true, inSync: false}, true},   // edited behind our back
		{memberState{found: true, managed: false, inSync: false}, false}, // another Work's: a conflict
	}
	for _, tt := range tests {
		if got := drifted(tt.s); got != tt.want {
			t.Errorf("drifted(%+v) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// appliedCondition is an Applied condition of a Work of generation gen.
func appliedCondition(status metav1.ConditionStatus, gen int64) []metav1.Condition {
	return []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: status, ObservedGeneration: gen}}
}

func TestFirstApplied(t *testing.T) {
	fresh := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	appliedOK := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: workv1alpha1.WorkStatus{Conditions: appliedCondition(metav1.ConditionTrue, 1)}}
	appliedFailed := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: workv1alpha1.WorkStatus{Conditions: appliedCondition(metav1.ConditionFalse, 1)}}
	suspended := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true)}}
	tests := []struct {
		name        string
		old, new    workv1alpha1.Work
		pendingOld  bool
		wantTrigger bool
	}{
		{"applied for the first time", fresh, appliedOK, true, true},
		{"failed the first time: reflect what is managed", fresh, appliedFailed, true, true},
		{"already applied", appliedOK, appliedOK, false, false},
		{"not yet applied", fresh, fresh, true, false},
		// Nothing will be applied: reflect what is there.
		{"suspended from the start", suspended, suspended, false, false},
	}
	for _, tt := range tests {
		if got := firstApplyPending(&tt.old); got != tt.pendingOld {
			t.Errorf("%s: firstApplyPending(old) = %v, want %v", tt.name, got, tt.pendingOld)
		}
		if got := firstApplied(&tt.old, &tt.new); got != tt.wantTrigger {
			t.Errorf("%s: firstApplied = %v, want %v", tt.name, got, tt.wantTrigger)
		}
	}
}
