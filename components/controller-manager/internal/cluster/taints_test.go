package cluster

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

func TestTaintsFor(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	at := func(taint corev1.Taint, when metav1.Time) corev1.Taint {
		taint.TimeAdded = &when
		return taint
	}
	cordon := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	userTaint := corev1.Taint{Key: "example.com/gpu", Value: "none", Effect: corev1.TaintEffectPreferNoSchedule}
	// Failover's NoExecute twin is not this controller's.
	notReadyNoExecute := corev1.Taint{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute}

	tests := []struct {
		name        string
		current     []corev1.Taint
		ready       *metav1.Condition
		want        []corev1.Taint
		wantAdded   []corev1.Taint
		wantRemoved []corev1.Taint
	}{
		{
			name:      "no condition yet: not ready",
			ready:     nil,
			want:      []corev1.Taint{at(notReadyTaint, now)},
			wantAdded: []corev1.Taint{at(notReadyTaint, now)},
		},
		{
			name:  "ready and untainted: nothing to do",
			ready: ready(metav1.ConditionTrue, "", ""),
		},
		{
			name:      "false adds not-ready",
			current:   []corev1.Taint{userTaint},
			ready:     ready(metav1.ConditionFalse, "", ""),
			want:      []corev1.Taint{userTaint, at(notReadyTaint, now)},
			wantAdded: []corev1.Taint{at(notReadyTaint, now)},
		},
		{
			name:        "not reachable is false: not-ready replaces unreachable",
			current:     []corev1.Taint{at(unreachableTaint, earlier)},
			ready:       ready(metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReachable, msgNotReachable),
			want:        []corev1.Taint{at(notReadyTaint, now)},
			wantAdded:   []corev1.Taint{at(notReadyTaint, now)},
			wantRemoved: []corev1.Taint{at(unreachableTaint, earlier)},
		},
		{
			name:      "unknown adds unreachable",
			ready:     ready(metav1.ConditionUnknown, "", ""),
			want:      []corev1.Taint{at(unreachableTaint, now)},
			wantAdded: []corev1.Taint{at(unreachableTaint, now)},
		},
		{
			name:        "unknown swaps not-ready for unreachable",
			current:     []corev1.Taint{cordon, at(notReadyTaint, earlier)},
			ready:       ready(metav1.ConditionUnknown, "", ""),
			want:        []corev1.Taint{cordon, at(unreachableTaint, now)},
			wantAdded:   []corev1.Taint{at(unreachableTaint, now)},
			wantRemoved: []corev1.Taint{at(notReadyTaint, earlier)},
		},
		{
			name:    "a taint that stays keeps its time",
			current: []corev1.Taint{at(unreachableTaint, earlier)},
			ready:   ready(metav1.ConditionUnknown, "", ""),
			want:    []corev1.Taint{at(unreachableTaint, earlier)},
		},
		{
			name:        "true removes both, keeps the rest",
			current:     []corev1.Taint{at(notReadyTaint, earlier), userTaint, at(unreachableTaint, earlier), notReadyNoExecute, cordon},
			ready:       ready(metav1.ConditionTrue, "", ""),
			want:        []corev1.Taint{userTaint, notReadyNoExecute, cordon},
			wantRemoved: []corev1.Taint{at(notReadyTaint, earlier), at(unreachableTaint, earlier)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, added, removed := taintsFor(tt.current, tt.ready, now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAdded, added); diff != "" {
				t.Errorf("added (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRemoved, removed); diff != "" {
				t.Errorf("removed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeTaintChange(t *testing.T) {
	got := describeTaintChange([]corev1.Taint{unreachableTaint}, []corev1.Taint{notReadyTaint})
	want := "added cluster.karmada.io/unreachable:NoSchedule, removed cluster.karmada.io/not-ready:NoSchedule"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestClusterChanged(t *testing.T) {
	base := func() *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 1, Finalizers: []string{clusterv1alpha1.ClusterControllerFinalizer}},
			Status: clusterv1alpha1.ClusterStatus{
				Conditions: []metav1.Condition{*ready(metav1.ConditionTrue, "ClusterReady", "")},
			},
		}
	}
	tests := []struct {
		name   string
		mutate func(*clusterv1alpha1.Cluster)
		want   bool
	}{
		{name: "status summary only", mutate: func(c *clusterv1alpha1.Cluster) {
			c.Status.KubernetesVersion = "v1.37.2"
			c.ResourceVersion = "2"
		}},
		{name: "ready message only", mutate: func(c *clusterv1alpha1.Cluster) { c.Status.Conditions[0].Message = "x" }},
		{name: "spec", mutate: func(c *clusterv1alpha1.Cluster) { c.Generation = 2 }, want: true},
		{name: "deletion", mutate: func(c *clusterv1alpha1.Cluster) { now := metav1.Now(); c.DeletionTimestamp = &now }, want: true},
		{name: "finalizer removed", mutate: func(c *clusterv1alpha1.Cluster) { c.Finalizers = nil }, want: true},
		{name: "ready flips", mutate: func(c *clusterv1alpha1.Cluster) { c.Status.Conditions[0].Status = metav1.ConditionUnknown }, want: true},
		{name: "ready disappears", mutate: func(c *clusterv1alpha1.Cluster) { c.Status.Conditions = nil }, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newC := base()
			tt.mutate(newC)
			if got := clusterChanged(base(), newC); got != tt.want {
				t.Errorf("clusterChanged = %v, want %v", got, tt.want)
			}
		})
	}
}
