package karmada

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
)

// deploymentRolledOut reports whether every replica of a Deployment runs its
// current template and is available: the controller has seen the latest
// spec, no pod of an older ReplicaSet is left, and all are available. A
// Deployment with one ready pod of the old ReplicaSet is not rolled out. The
// message says what is missing.
func deploymentRolledOut(d *appsv1.Deployment) (bool, string) {
	want := ptr.Deref(d.Spec.Replicas, 1)
	s := d.Status
	switch {
	case s.ObservedGeneration < d.Generation:
		return false, fmt.Sprintf("Deployment %s: waiting for the controller to observe generation %d", d.Name, d.Generation)
	case s.UpdatedReplicas < want:
		return false, fmt.Sprintf("Deployment %s: %d of %d replicas updated", d.Name, s.UpdatedReplicas, want)
	case s.Replicas > s.UpdatedReplicas:
		return false, fmt.Sprintf("Deployment %s: %d old replicas still running", d.Name, s.Replicas-s.UpdatedReplicas)
	case s.AvailableReplicas < want || s.ReadyReplicas < want:
		return false, fmt.Sprintf("Deployment %s: %d of %d replicas available", d.Name, s.AvailableReplicas, want)
	}
	return true, ""
}

// statefulSetRolledOut is deploymentRolledOut for a StatefulSet: every pod
// at the update revision, and all ready.
func statefulSetRolledOut(s *appsv1.StatefulSet) (bool, string) {
	want := ptr.Deref(s.Spec.Replicas, 1)
	st := s.Status
	switch {
	case st.ObservedGeneration < s.Generation:
		return false, fmt.Sprintf("StatefulSet %s: waiting for the controller to observe generation %d", s.Name, s.Generation)
	case st.UpdatedReplicas < want || (st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision):
		return false, fmt.Sprintf("StatefulSet %s: %d of %d replicas updated", s.Name, st.UpdatedReplicas, want)
	case st.Replicas > want:
		return false, fmt.Sprintf("StatefulSet %s: %d replicas to remove", s.Name, st.Replicas-want)
	case st.ReadyReplicas < want:
		return false, fmt.Sprintf("StatefulSet %s: %d of %d replicas ready", s.Name, st.ReadyReplicas, want)
	}
	return true, ""
}
