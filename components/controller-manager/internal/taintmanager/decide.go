package taintmanager

import (
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// Decide says whether a binding with tolerations must leave a cluster with
// the NoExecute taints now, and otherwise how long until it must (zero:
// never, it tolerates them for good). As Kubernetes' taint manager does
// for pods: one taint nothing tolerates evicts at once; otherwise the
// shortest tolerationSeconds among the tolerations used counts from when
// its taint was added (from now for a taint without that time).
func Decide(taints []corev1.Taint, tolerations []corev1.Toleration, now time.Time) (wait time.Duration, evict bool) {
	var deadline time.Time
	for i := range taints {
		taint := &taints[i]
		used := false
		for j := range tolerations {
			tol := &tolerations[j]
			if !tol.ToleratesTaint(logr.Discard(), taint, true) {
				continue
			}
			used = true
			if tol.TolerationSeconds == nil {
				continue
			}
			added := now
			if taint.TimeAdded != nil {
				added = taint.TimeAdded.Time
			}
			d := added.Add(time.Duration(max(*tol.TolerationSeconds, 0)) * time.Second)
			if deadline.IsZero() || d.Before(deadline) {
				deadline = d
			}
		}
		if !used {
			return 0, true
		}
	}
	if deadline.IsZero() {
		return 0, false
	}
	if left := deadline.Sub(now); left > 0 {
		return left, false
	}
	return 0, true
}
