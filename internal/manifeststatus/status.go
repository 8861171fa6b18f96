// Package manifeststatus builds the entries of Work.status.manifestStatuses
// from member objects: their status (resource interpreter ReflectStatus)
// and health (InterpretHealth), with the events of both. The execution
// controller writes a manifest's first entry together with the Applied
// condition; the work-status controller keeps the entries current.
package manifeststatus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// Event actions (events.k8s.io/v1 requires one).
const (
	actionReflectStatus   = "ReflectStatus"
	actionInterpretHealth = "InterpretHealth"
)

// Reflector interprets member objects into manifest status entries.
type Reflector struct {
	Interpreter interpreter.Interpreter
	// Recorder receives, on the Work, a ReflectStatus and an
	// InterpretHealth event when an entry's status or health changes or
	// cannot be interpreted.
	Recorder events.EventRecorder
}

// Reflect returns the entry of the manifest id of work from its member
// object observed, which it only reads; what stands for the object in
// events and errors. Where interpreting fails, the previous entry's value
// is kept and the error returned.
func (r Reflector) Reflect(ctx context.Context, work *workv1alpha1.Work, id workv1alpha1.ResourceIdentifier, what fmt.Stringer, observed *unstructured.Unstructured) (workv1alpha1.ManifestStatus, error) {
	prev := Previous(work.Status.ManifestStatuses, id)
	got := interpret(ctx, r.Interpreter, observed)
	ms := entry(id, got, prev)
	r.record(work, what, got, prev, ms)
	var errs []error
	if got.reflectErr != nil {
		errs = append(errs, fmt.Errorf("reflecting status of %s: %w", what, got.reflectErr))
	}
	if got.healthErr != nil {
		errs = append(errs, fmt.Errorf("interpreting health of %s: %w", what, got.healthErr))
	}
	return ms, errors.Join(errs...)
}

// record emits events for a failure, or for a status or health that
// changed.
func (r Reflector) record(work *workv1alpha1.Work, what fmt.Stringer, got interpreted, prev *workv1alpha1.ManifestStatus, ms workv1alpha1.ManifestStatus) {
	switch {
	case got.reflectErr != nil:
		r.Recorder.Eventf(work, nil, corev1.EventTypeWarning, flotillaevents.ReasonReflectStatusFailed, actionReflectStatus,
			"Failed to reflect the status of %s: %v", what, got.reflectErr)
	case prev == nil || !SameRaw(prev.Status, ms.Status):
		r.Recorder.Eventf(work, nil, corev1.EventTypeNormal, flotillaevents.ReasonReflectStatusSucceed, actionReflectStatus,
			"Reflected the status of %s", what)
	}
	switch {
	case got.healthErr != nil:
		r.Recorder.Eventf(work, nil, corev1.EventTypeWarning, flotillaevents.ReasonInterpretHealthFailed, actionInterpretHealth,
			"Failed to interpret the health of %s: %v", what, got.healthErr)
	case prev == nil || prev.Health != ms.Health:
		r.Recorder.Eventf(work, nil, corev1.EventTypeNormal, flotillaevents.ReasonInterpretHealthSucceed, actionInterpretHealth,
			"Health of %s is %s", what, ms.Health)
	}
}

// interpreted is the status and health of one member object, with the
// errors of interpreting them.
type interpreted struct {
	status     *runtime.RawExtension
	health     workv1alpha1.ResourceHealth
	reflectErr error
	healthErr  error
}

// interpret reflects the member object's status and judges its health.
// Kinds without a health rule are Unknown, as in Karmada.
func interpret(ctx context.Context, interp interpreter.Interpreter, observed *unstructured.Unstructured) interpreted {
	var out interpreted
	gvk := observed.GroupVersionKind()
	if interp.HookEnabled(gvk, configv1alpha1.InterpreterOperationInterpretStatus) {
		out.status, out.reflectErr = interp.ReflectStatus(ctx, observed)
	}
	out.health = workv1alpha1.ResourceUnknown
	if interp.HookEnabled(gvk, configv1alpha1.InterpreterOperationInterpretHealth) {
		healthy, err := interp.InterpretHealth(ctx, observed)
		switch {
		case err != nil:
			out.healthErr = err
		case healthy:
			out.health = workv1alpha1.ResourceHealthy
		default:
			out.health = workv1alpha1.ResourceUnhealthy
		}
	}
	return out
}

// entry is the entry of one manifest: what was interpreted, or, where
// interpreting failed, what the previous entry said.
func entry(id workv1alpha1.ResourceIdentifier, got interpreted, prev *workv1alpha1.ManifestStatus) workv1alpha1.ManifestStatus {
	ms := workv1alpha1.ManifestStatus{Identifier: id, Status: got.status, Health: got.health}
	if prev != nil {
		if got.reflectErr != nil {
			ms.Status = prev.Status
		}
		if got.healthErr != nil {
			ms.Health = prev.Health
		}
	}
	return ms
}

// Previous finds the entry of the object id in statuses; nil if none.
func Previous(statuses []workv1alpha1.ManifestStatus, id workv1alpha1.ResourceIdentifier) *workv1alpha1.ManifestStatus {
	for i := range statuses {
		if statuses[i].Identifier == id {
			return &statuses[i]
		}
	}
	return nil
}

// Equal compares manifest statuses, their status as JSON values: the same
// status may come back from the API server formatted differently.
func Equal(a, b []workv1alpha1.ManifestStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Identifier != b[i].Identifier || a[i].Health != b[i].Health || !SameRaw(a[i].Status, b[i].Status) {
			return false
		}
	}
	return true
}

// SameRaw compares two JSON documents by value.
func SameRaw(a, b *runtime.RawExtension) bool {
	ab, bb := rawBytes(a), rawBytes(b)
	if bytes.Equal(ab, bb) {
		return true
	}
	if ab == nil || bb == nil {
		return false
	}
	var av, bv any
	if json.Unmarshal(ab, &av) != nil || json.Unmarshal(bb, &bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}

// rawBytes is the JSON of a RawExtension; nil for none or a JSON null.
func rawBytes(r *runtime.RawExtension) []byte {
	if r == nil {
		return nil
	}
	raw := r.Raw
	if raw == nil && r.Object != nil {
		var err error
		if raw, err = json.Marshal(r.Object); err != nil {
			return []byte(fmt.Sprintf("%q", err.Error()))
		}
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return raw
}
