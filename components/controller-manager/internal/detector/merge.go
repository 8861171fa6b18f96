package detector

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// bindingIntent is what the detector owns in a binding. The rest (the
// scheduler's spec.clusters, eviction tasks, requiredBy, the scheduling
// suspension, status) belongs to other controllers and is kept.
type bindingIntent struct {
	claim claim
	// idLabel holds the binding's own permanent id: assigned once, kept.
	idLabel   string
	owner     metav1.OwnerReference
	finalizer string
	// spec holds the detector's fields; Clusters, GracefulEvictionTasks,
	// RequiredBy, RescheduleTriggeredAt and Suspension.Scheduling are
	// ignored.
	spec workv1alpha2.ResourceBindingSpec
}

// mergeBinding writes intent into a binding's metadata and spec, and
// reports whether anything changed. newID makes the permanent id of a
// binding without one. Values are compared semantically, so what the API
// server normalizes (quantities, empty versus absent) does not count as a
// change.
func mergeBinding(meta *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec, intent *bindingIntent, newID func() string) bool {
	changed := false
	if c := claimChange(meta.Labels, meta.Annotations, intent.claim); !c.empty() {
		meta.Labels, meta.Annotations = c.apply(meta.Labels, meta.Annotations)
		changed = true
	}
	if meta.Labels[intent.idLabel] == "" {
		if meta.Labels == nil {
			meta.Labels = map[string]string{}
		}
		meta.Labels[intent.idLabel] = newID()
		changed = true
	}
	if refs, ok := withController(meta.OwnerReferences, intent.owner); !ok {
		meta.OwnerReferences = refs
		changed = true
	}
	if intent.finalizer != "" && !slices.Contains(meta.Finalizers, intent.finalizer) {
		meta.Finalizers = append(meta.Finalizers, intent.finalizer)
		changed = true
	}

	want := &intent.spec
	if !equality.Semantic.DeepEqual(spec.Resource, want.Resource) {
		spec.Resource = want.Resource
		changed = true
	}
	if spec.Replicas != want.Replicas {
		spec.Replicas = want.Replicas
		changed = true
	}
	if !equality.Semantic.DeepEqual(spec.ReplicaRequirements, want.ReplicaRequirements) {
		spec.ReplicaRequirements = want.ReplicaRequirements
		changed = true
	}
	if !equality.Semantic.DeepEqual(spec.Components, want.Components) {
		spec.Components = want.Components
		changed = true
	}
	if !equality.Semantic.DeepEqual(spec.Placement, want.Placement) {
		spec.Placement = want.Placement
		changed = true
	}
	if spec.PropagateDeps != want.PropagateDeps {
		spec.PropagateDeps = want.PropagateDeps
		changed = true
	}
	if spec.SchedulerName != want.SchedulerName {
		spec.SchedulerName = want.SchedulerName
		changed = true
	}
	if !equality.Semantic.DeepEqual(spec.Failover, want.Failover) {
		spec.Failover = want.Failover
		changed = true
	}
	if spec.ConflictResolution != want.ConflictResolution {
		spec.ConflictResolution = want.ConflictResolution
		changed = true
	}
	if !equality.Semantic.DeepEqual(spec.PreserveResourcesOnDeletion, want.PreserveResourcesOnDeletion) {
		spec.PreserveResourcesOnDeletion = want.PreserveResourcesOnDeletion
		changed = true
	}
	if !equality.Semantic.DeepEqual(spec.SchedulePriority, want.SchedulePriority) {
		spec.SchedulePriority = want.SchedulePriority
		changed = true
	}
	if !equality.Semantic.DeepEqual(spec.WorkloadAffinityGroups, want.WorkloadAffinityGroups) {
		spec.WorkloadAffinityGroups = want.WorkloadAffinityGroups
		changed = true
	}
	if s := mergeSuspension(spec.Suspension, want.Suspension); !suspensionEqual(spec.Suspension, s) {
		spec.Suspension = s
		changed = true
	}
	return changed
}

// withController returns refs with owner as the only controller reference,
// and whether refs already were so.
func withController(refs []metav1.OwnerReference, owner metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	found := false
	for _, r := range refs {
		switch {
		case r.UID == owner.UID && !found && equality.Semantic.DeepEqual(r, owner):
			found = true
			out = append(out, r)
		case r.UID == owner.UID, r.Controller != nil && *r.Controller:
			// A stale copy of ours, or another controller: replaced.
		default:
			out = append(out, r)
		}
	}
	if found && len(out) == len(refs) {
		return refs, true
	}
	if !found {
		out = append(out, owner)
	}
	return out, false
}

// mergeSuspension is the policy's dispatching suspension with the binding's
// own scheduling suspension kept.
func mergeSuspension(have, want *workv1alpha2.Suspension) *workv1alpha2.Suspension {
	out := &workv1alpha2.Suspension{}
	if want != nil {
		out.Suspension = *want.Suspension.DeepCopy()
	}
	if have != nil {
		out.Scheduling = have.Scheduling
	}
	if suspensionEmpty(out) {
		return nil
	}
	return out
}

func suspensionEmpty(s *workv1alpha2.Suspension) bool {
	return s == nil || (s.Scheduling == nil && equality.Semantic.DeepEqual(s.Suspension, policyv1alpha1.Suspension{}))
}

// suspensionEqual treats absent and empty alike: the API server stores an
// empty suspension as {}.
func suspensionEqual(a, b *workv1alpha2.Suspension) bool {
	if suspensionEmpty(a) || suspensionEmpty(b) {
		return suspensionEmpty(a) && suspensionEmpty(b)
	}
	return equality.Semantic.DeepEqual(a, b)
}
