package cluster

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// The scheduling taints this controller owns. Their NoExecute twins belong to
// failover and are left alone.
var (
	notReadyTaint    = corev1.Taint{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}
	unreachableTaint = corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule}
)

// taintsFor returns spec.taints as the Ready condition wants them, with the
// taints added and removed. Ready=False gets not-ready, Ready=Unknown gets
// unreachable, Ready=True neither. A cluster that has reported no Ready
// condition yet is treated as not ready, as Karmada does, so that nothing is
// scheduled to it before its first successful probe. Other taints, and the
// TimeAdded of a taint that stays, are kept.
func taintsFor(current []corev1.Taint, ready *metav1.Condition, now metav1.Time) (taints, added, removed []corev1.Taint) {
	var want, drop []corev1.Taint
	switch {
	case ready == nil || ready.Status == metav1.ConditionFalse:
		want, drop = []corev1.Taint{notReadyTaint}, []corev1.Taint{unreachableTaint}
	case ready.Status == metav1.ConditionUnknown:
		want, drop = []corev1.Taint{unreachableTaint}, []corev1.Taint{notReadyTaint}
	default:
		drop = []corev1.Taint{notReadyTaint, unreachableTaint}
	}

	for _, t := range current {
		if containsTaint(drop, t) {
			removed = append(removed, t)
			continue
		}
		taints = append(taints, t)
	}
	for _, w := range want {
		if !containsTaint(taints, w) {
			w.TimeAdded = &now
			taints = append(taints, w)
			added = append(added, w)
		}
	}
	return taints, added, removed
}

// containsTaint matches on key and effect, the identity of a taint in
// spec.taints (listMapKey key, effect).
func containsTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for _, c := range taints {
		if c.Key == t.Key && c.Effect == t.Effect {
			return true
		}
	}
	return false
}

// describeTaintChange is the note of a TaintCluster event.
func describeTaintChange(added, removed []corev1.Taint) string {
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added "+taintList(added))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+taintList(removed))
	}
	return strings.Join(parts, ", ")
}

func taintList(taints []corev1.Taint) string {
	s := make([]string, len(taints))
	for i, t := range taints {
		s[i] = fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return strings.Join(s, ",")
}
