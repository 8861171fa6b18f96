package workloadrebalancer

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
)

// Observe returns the observedWorkloads for the workloads of spec, given
// the ones recorded so far:
//   - a workload still listed keeps its result, so it is triggered once;
//   - a workload no longer listed stays when it was rescheduled (that
//     happened and the user may want to see it) and goes otherwise;
//   - a workload newly listed is added without a result, to be triggered.
//
// A workload whose reference was edited counts as one removed and one
// added. Duplicates in spec are observed once. The result is sorted by
// apiVersion, kind, namespace and name, so that reordering spec changes
// nothing.
func Observe(workloads []appsv1alpha1.ObjectReference, observed []appsv1alpha1.ObservedWorkload) []appsv1alpha1.ObservedWorkload {
	listed := make(map[appsv1alpha1.ObjectReference]bool, len(workloads))
	for _, w := range workloads {
		listed[w] = true
	}
	out := make([]appsv1alpha1.ObservedWorkload, 0, len(workloads))
	seen := make(map[appsv1alpha1.ObjectReference]bool, len(observed))
	for _, o := range observed {
		if seen[o.Workload] {
			continue
		}
		if listed[o.Workload] || o.Result == appsv1alpha1.RebalanceSuccessful {
			out = append(out, o)
			seen[o.Workload] = true
		}
	}
	for _, w := range workloads {
		if !seen[w] {
			out = append(out, appsv1alpha1.ObservedWorkload{Workload: w})
			seen[w] = true
		}
	}
	slices.SortFunc(out, func(a, b appsv1alpha1.ObservedWorkload) int {
		x, y := a.Workload, b.Workload
		return cmp.Or(cmp.Compare(x.APIVersion, y.APIVersion), cmp.Compare(x.Kind, y.Kind),
			cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	return out
}

// Pending reports whether a workload has no result yet: its binding could
// not be read or written and the rebalancer is retried.
func Pending(observed []appsv1alpha1.ObservedWorkload) bool {
	return slices.ContainsFunc(observed, func(o appsv1alpha1.ObservedWorkload) bool { return o.Result == "" })
}

// NextStatus is the status to write after a pass over the workloads. The
// finish time moves to now when the results changed and none is pending: a
// rebalancer whose spec gained workloads finishes again once they have
// results, and its TTL counts from then. A pass that changed nothing keeps
// the time of the pass that did.
func NextStatus(old appsv1alpha1.WorkloadRebalancerStatus, observed []appsv1alpha1.ObservedWorkload, generation int64, now metav1.Time) appsv1alpha1.WorkloadRebalancerStatus {
	next := appsv1alpha1.WorkloadRebalancerStatus{
		ObservedWorkloads:  observed,
		ObservedGeneration: generation,
		FinishTime:         old.FinishTime,
	}
	if !Pending(observed) && !equality.Semantic.DeepEqual(next, old) {
		next.FinishTime = &now
	}
	return next
}

// NeedsTrigger reports whether a binding must be asked to reschedule for a
// rebalancer created at created. A request at the same time or later (from
// this rebalancer or a newer one) already covers it; moving it back would
// not make the scheduler run again and could hide the newer one.
func NeedsTrigger(created metav1.Time, triggeredAt *metav1.Time) bool {
	return triggeredAt == nil || created.After(triggeredAt.Time)
}

// Expiry is when a finished rebalancer with a TTL is to be deleted; false
// when it has no TTL or has not finished.
func Expiry(r *appsv1alpha1.WorkloadRebalancer) (time.Time, bool) {
	ttl, finished := r.Spec.TTLSecondsAfterFinished, r.Status.FinishTime
	if ttl == nil || finished == nil {
		return time.Time{}, false
	}
	return finished.Add(time.Duration(*ttl) * time.Second), true
}
