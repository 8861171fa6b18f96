package policymatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func pp(name string, explicit int32, implicit ImplicitPriority, preempt bool) Candidate {
	return Candidate{Kind: PropagationPolicy, Namespace: "team", Name: name, Explicit: explicit, Implicit: implicit, Preempt: preempt}
}

func cpp(name string, explicit int32, implicit ImplicitPriority, preempt bool) Candidate {
	return Candidate{Kind: ClusterPropagationPolicy, Name: name, Explicit: explicit, Implicit: implicit, Preempt: preempt}
}

func ptr(c Candidate) *Candidate { return &c }

func TestDecide(t *testing.T) {
	tests := []struct {
		name    string
		claimed *Candidate
		pps     []Candidate
		cpps    []Candidate
		want    Decision
	}{
		{name: "nothing selects the template", want: Decision{}},
		{
			name: "higher explicit priority wins",
			pps:  []Candidate{pp("a", 1, MatchName, false), pp("b", 2, MatchAll, false)},
			want: Decision{Policy: ptr(pp("b", 2, MatchAll, false))},
		},
		{
			name: "negative priorities compare too",
			pps:  []Candidate{pp("a", -5, MatchName, false), pp("b", -1, MatchAll, false)},
			want: Decision{Policy: ptr(pp("b", -1, MatchAll, false))},
		},
		{
			name: "equal explicit priority: name beats label selector beats kind",
			pps:  []Candidate{pp("a", 0, MatchAll, false), pp("b", 0, MatchName, false), pp("c", 0, MatchLabelSelector, false)},
			want: Decision{Policy: ptr(pp("b", 0, MatchName, false))},
		},
		{
			name: "equal priorities: the first name alphabetically",
			pps:  []Candidate{pp("zeta", 0, MatchLabelSelector, false), pp("alpha", 0, MatchLabelSelector, false)},
			want: Decision{Policy: ptr(pp("alpha", 0, MatchLabelSelector, false))},
		},
		{
			name: "a PropagationPolicy beats a ClusterPropagationPolicy of higher priority",
			pps:  []Candidate{pp("low", 0, MatchAll, false)},
			cpps: []Candidate{cpp("high", 100, MatchName, false)},
			want: Decision{Policy: ptr(pp("low", 0, MatchAll, false))},
		},
		{
			name: "ClusterPropagationPolicies when no PropagationPolicy selects",
			cpps: []Candidate{cpp("b", 1, MatchAll, false), cpp("a", 1, MatchAll, false)},
			want: Decision{Policy: ptr(cpp("a", 1, MatchAll, false))},
		},
		{
			name:    "a claimed template stays with its policy without preemption",
			claimed: ptr(pp("low", 1, MatchAll, false)),
			pps:     []Candidate{pp("low", 1, MatchAll, false), pp("high", 5, MatchName, false)},
			want:    Decision{Policy: ptr(pp("low", 1, MatchAll, false))},
		},
		{
			name:    "preemption Always takes over from lower priority",
			claimed: ptr(pp("low", 1, MatchAll, false)),
			pps:     []Candidate{pp("low", 1, MatchAll, false), pp("high", 5, MatchAll, true)},
			want:    Decision{Policy: ptr(pp("high", 5, MatchAll, true)), Preempted: true},
		},
		{
			name:    "preemption needs strictly higher explicit priority",
			claimed: ptr(pp("b", 3, MatchAll, false)),
			pps:     []Candidate{pp("b", 3, MatchAll, false), pp("a", 3, MatchName, true)},
			want:    Decision{Policy: ptr(pp("b", 3, MatchAll, false))},
		},
		{
			name:    "the best of the preempting policies wins",
			claimed: ptr(pp("low", 1, MatchAll, false)),
			pps:     []Candidate{pp("low", 1, MatchAll, false), pp("mid", 3, MatchName, true), pp("top", 4, MatchAll, true), pp("higher-no-preempt", 9, MatchName, false)},
			want:    Decision{Policy: ptr(pp("top", 4, MatchAll, true)), Preempted: true},
		},
		{
			name:    "a claiming policy with preemption is not preempted by itself",
			claimed: ptr(pp("only", 1, MatchAll, true)),
			pps:     []Candidate{pp("only", 1, MatchAll, true)},
			want:    Decision{Policy: ptr(pp("only", 1, MatchAll, true))},
		},
		{
			name:    "a PropagationPolicy with preemption takes over from a ClusterPropagationPolicy whatever the priorities",
			claimed: ptr(cpp("cluster", 100, MatchName, false)),
			pps:     []Candidate{pp("ns", -1, MatchAll, true)},
			cpps:    []Candidate{cpp("cluster", 100, MatchName, false)},
			want:    Decision{Policy: ptr(pp("ns", -1, MatchAll, true)), Preempted: true},
		},
		{
			name:    "a PropagationPolicy without preemption leaves a ClusterPropagationPolicy's claim",
			claimed: ptr(cpp("cluster", 0, MatchAll, false)),
			pps:     []Candidate{pp("ns", 10, MatchName, false)},
			cpps:    []Candidate{cpp("cluster", 0, MatchAll, false)},
			want:    Decision{Policy: ptr(cpp("cluster", 0, MatchAll, false))},
		},
		{
			name:    "ClusterPropagationPolicies preempt each other by priority",
			claimed: ptr(cpp("low", 0, MatchAll, false)),
			cpps:    []Candidate{cpp("low", 0, MatchAll, false), cpp("high", 2, MatchAll, true), cpp("equal", 0, MatchName, true)},
			want:    Decision{Policy: ptr(cpp("high", 2, MatchAll, true)), Preempted: true},
		},
		{
			name:    "a ClusterPropagationPolicy never preempts a PropagationPolicy",
			claimed: ptr(pp("ns", 0, MatchAll, false)),
			pps:     []Candidate{pp("ns", 0, MatchAll, false)},
			cpps:    []Candidate{cpp("cluster", 100, MatchName, true)},
			want:    Decision{Policy: ptr(pp("ns", 0, MatchAll, false))},
		},
		{
			name: "a template whose claim is gone goes to the best policy",
			pps:  []Candidate{pp("b", 0, MatchAll, false)},
			cpps: []Candidate{cpp("a", 9, MatchName, true)},
			want: Decision{Policy: ptr(pp("b", 0, MatchAll, false))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.claimed, tt.pps, tt.cpps)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareIsATotalOrder(t *testing.T) {
	a := Candidate{Kind: ClusterPropagationPolicy, Name: "same"}
	b := Candidate{Kind: PropagationPolicy, Namespace: "ns", Name: "same"}
	if Compare(a, b) != -Compare(b, a) || Compare(a, b) == 0 {
		t.Errorf("Compare(a, b) = %d, Compare(b, a) = %d: want opposite non-zero", Compare(a, b), Compare(b, a))
	}
	if Compare(a, a) != 0 {
		t.Errorf("Compare(a, a) = %d, want 0", Compare(a, a))
	}
}
