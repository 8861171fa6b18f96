package workstatus

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// dispatched reports whether the execution controller has applied the
// Work's current spec and nothing holds it back, so that a member object
// missing or changed is drift to put back. Before that, or after a failure,
// the execution controller is on it anyway.
func dispatched(work *workv1alpha1.Work) bool {
	if ptr.Deref(work.Spec.SuspendDispatching, false) || !work.DeletionTimestamp.IsZero() {
		return false
	}
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied)
	return applied != nil && applied.Status == metav1.ConditionTrue && applied.ObservedGeneration == work.Generation
}

// firstApplyPending reports whether the execution controller has yet to
// report on the Work for the first time while it may dispatch: it then
// writes the manifests' first status entries itself, together with the
// Applied condition.
func firstApplyPending(work *workv1alpha1.Work) bool {
	return !ptr.Deref(work.Spec.SuspendDispatching, false) &&
		meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied) == nil
}

// firstApplied passes the Work update in which the Applied condition first
// appears, after which the work-status controller takes over the entries.
func firstApplied(oldObj, newObj client.Object) bool {
	o, okOld := oldObj.(*workv1alpha1.Work)
	n, okNew := newObj.(*workv1alpha1.Work)
	return okOld && okNew && firstApplyPending(o) && !firstApplyPending(n)
}

// memberState is what the informer says of one manifest's member object.
type memberState struct {
	found bool
	// managed: the object found is this Work's (not another's).
	managed bool
	// inSync: see execution.InSync; only meaningful when managed.
	inSync bool
}

// drifted reports whether the member object went away or was changed
// behind the control plane's back. An object of the name that another Work
// manages is a conflict the execution controller reports, not drift.
func drifted(s memberState) bool {
	return !s.found || (s.managed && !s.inSync)
}
