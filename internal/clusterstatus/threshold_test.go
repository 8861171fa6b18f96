package clusterstatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestDecideReady(t *testing.T) {
	now := time.Unix(1000, 0)
	th := Thresholds{Success: 30 * time.Second, Failure: 10 * time.Second}
	ready, notReady := ReadyCondition(true, 1), ReadyCondition(false, 1)
	tests := []struct {
		name       string
		stored     *metav1.Condition
		observed   metav1.Condition
		heldFor    time.Duration
		seenBefore bool
		th         Thresholds
		want       metav1.ConditionStatus
	}{
		{"first observation is taken at once", &ready, notReady, 0, false, th, metav1.ConditionFalse},
		{"no Ready yet", nil, ready, 0, true, th, metav1.ConditionTrue},
		{"failure shorter than its threshold keeps Ready", &ready, notReady, 9 * time.Second, true, th, metav1.ConditionTrue},
		{"failure that held for its threshold", &ready, notReady, 10 * time.Second, true, th, metav1.ConditionFalse},
		{"recovery shorter than its threshold keeps not Ready", &notReady, ready, 29 * time.Second, true, th, metav1.ConditionFalse},
		{"recovery that held for its threshold", &notReady, ready, 30 * time.Second, true, th, metav1.ConditionTrue},
		{"no flip", &ready, ready, 0, true, th, metav1.ConditionTrue},
		{"zero thresholds follow at once", &ready, notReady, 0, true, Thresholds{}, metav1.ConditionFalse},
		{"Unknown (the control plane's) is left at once", &metav1.Condition{Type: ready.Type, Status: metav1.ConditionUnknown}, ready, 0, true, th, metav1.ConditionTrue},
	}
	for _, tt := range tests {
		got := decideReady(tt.stored, tt.observed, now.Add(-tt.heldFor), now, tt.seenBefore, tt.th)
		if got.Status != tt.want {
			t.Errorf("%s: Ready %s, want %s", tt.name, got.Status, tt.want)
		}
	}
}

// TestReadinessObserve: the time a health has held since resets when it
// changes, and a Cluster recreated under the same name is new.
func TestReadinessObserve(t *testing.T) {
	var r readiness
	t0 := time.Unix(0, 0)
	steps := []struct {
		uid       string
		healthy   bool
		at        int
		wantSince int
		wantSeen  bool
	}{
		{"a", true, 0, 0, false},
		{"a", true, 5, 0, true},
		{"a", false, 7, 7, true},
		{"a", false, 9, 7, true},
		{"b", false, 10, 10, false},
	}
	for i, s := range steps {
		since, seen := r.observe("m", types.UID(s.uid), s.healthy, t0.Add(time.Duration(s.at)*time.Second))
		if !since.Equal(t0.Add(time.Duration(s.wantSince)*time.Second)) || seen != s.wantSeen {
			t.Errorf("step %d: since %s seen %v, want %ds %v", i, since.Sub(t0), seen, s.wantSince, s.wantSeen)
		}
	}
}
