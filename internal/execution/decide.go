package execution

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// action is what to do with one manifest in the member.
type action int

const (
	// actionApply creates or updates the member object.
	actionApply action = iota
	// actionNone: the member object is already as desired.
	actionNone
	// actionConflict: the member has an object of that name the Work does
	// not manage, and the manifest does not allow taking it over.
	actionConflict
	// actionWait: the member object is being deleted; apply once it is gone.
	actionWait
)

func (a action) String() string {
	switch a {
	case actionApply:
		return "apply"
	case actionNone:
		return "none"
	case actionConflict:
		return "conflict"
	case actionWait:
		return "wait"
	}
	return "unknown"
}

// observation is what decide needs to know of the member object.
type observation struct {
	exists      bool
	terminating bool
	// managed: the object is this Work's (see ManagedBy).
	managed bool
	// inSync: see InSync; only meaningful when managed.
	inSync bool
}

// decide chooses what to do with one manifest. An object the Work does not
// manage is taken over only when the manifest says overwrite, as Karmada's
// conflictResolution does; abort is the default.
func decide(obs observation, resolution string) action {
	switch {
	case !obs.exists:
		return actionApply
	case obs.terminating:
		return actionWait
	case !obs.managed && resolution != workv1alpha1.ConflictResolutionOverwrite:
		return actionConflict
	case obs.managed && obs.inSync:
		return actionNone
	}
	return actionApply
}

// ConflictResolution reads the manifest's work.karmada.io/conflict-resolution
// annotation: overwrite or abort, anything else meaning abort.
func ConflictResolution(desired *unstructured.Unstructured) string {
	if strings.EqualFold(desired.GetAnnotations()[workv1alpha1.ConflictResolutionAnnotation], workv1alpha1.ConflictResolutionOverwrite) {
		return workv1alpha1.ConflictResolutionOverwrite
	}
	return workv1alpha1.ConflictResolutionAbort
}

// ManagedBy reports whether the member object came from work: its Work
// annotations name work, or its permanent-id label is work's. An object
// another Work manages, or one nobody manages, is not work's.
func ManagedBy(observed *unstructured.Unstructured, work *workv1alpha1.Work) bool {
	annotations := observed.GetAnnotations()
	if annotations[workv1alpha1.WorkNamespaceAnnotation] == work.Namespace && annotations[workv1alpha1.WorkNameAnnotation] == work.Name {
		return true
	}
	id := work.Labels[workv1alpha1.WorkPermanentIDLabel]
	return id != "" && observed.GetLabels()[workv1alpha1.WorkPermanentIDLabel] == id
}
