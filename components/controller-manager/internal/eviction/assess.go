package eviction

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Assessment is what becomes of a binding's eviction tasks.
type Assessment struct {
	// Tasks are the tasks to keep, in their order; a task without a
	// creation time gets now.
	Tasks []workv1alpha2.GracefulEvictionTask
	// Done are the clusters whose evicted copy may go now.
	Done []string
	// RecheckAfter is when the first kept task times out; zero when no
	// kept task can time out.
	RecheckAfter time.Duration
}

// Changed reports whether the tasks differ from those assessed.
func (a Assessment) Changed(before []workv1alpha2.GracefulEvictionTask) bool {
	if len(a.Done) > 0 || len(a.Tasks) != len(before) {
		return true
	}
	for i := range before {
		if before[i].CreationTimestamp == nil && a.Tasks[i].CreationTimestamp != nil {
			return true
		}
	}
	return false
}

// Assess decides, for each eviction task of a scheduled binding, whether
// it ends (a purge mode Directly task's copy is gone already: the binding
// controller does not keep it; the task stays as long as the others, for
// the scheduler's eviction filter and the state it carries):
//   - suppressDeletion set: true keeps it (purge mode Never) until a user
//     sets it false, which ends it;
//   - past its grace period (the task's gracePeriodSeconds, else timeout)
//     counted from its creation;
//   - when the workload is healthy wherever it is scheduled now: applied
//     and Healthy in every cluster of spec.clusters, as in Karmada (a kind
//     without a health interpretation reports Unknown, so its evicted copy
//     stays for the whole grace period).
//
// A binding scheduled nowhere keeps its evicted copies until they time
// out: they are all there is.
func Assess(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, now time.Time, timeout time.Duration) Assessment {
	var a Assessment
	up := scheduledUp(spec, status)
	for _, t := range spec.GracefulEvictionTasks {
		if t.CreationTimestamp == nil {
			stamp := metav1.NewTime(now)
			t.CreationTimestamp = &stamp
		}
		if t.SuppressDeletion != nil {
			if *t.SuppressDeletion {
				a.Tasks = append(a.Tasks, t)
			} else {
				a.Done = append(a.Done, t.FromCluster)
			}
			continue
		}
		grace := timeout
		if t.GracePeriodSeconds != nil {
			grace = time.Duration(*t.GracePeriodSeconds) * time.Second
		}
		left := t.CreationTimestamp.Add(grace).Sub(now)
		if left <= 0 || up {
			a.Done = append(a.Done, t.FromCluster)
			continue
		}
		a.Tasks = append(a.Tasks, t)
		if a.RecheckAfter == 0 || left < a.RecheckAfter {
			a.RecheckAfter = left
		}
	}
	return a
}

// scheduledUp reports whether the workload is applied and Healthy in every
// cluster it is scheduled to, and scheduled somewhere.
func scheduledUp(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	if len(spec.Clusters) == 0 {
		return false
	}
	items := make(map[string]workv1alpha2.AggregatedStatusItem, len(status.AggregatedStatus))
	for _, item := range status.AggregatedStatus {
		items[item.ClusterName] = item
	}
	for _, c := range spec.Clusters {
		item, ok := items[c.Name]
		if !ok || !item.Applied || item.Health != workv1alpha2.ResourceHealthy {
			return false
		}
	}
	return true
}
