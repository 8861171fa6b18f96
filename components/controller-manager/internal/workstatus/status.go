package workstatus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

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

// manifestStatus is the entry of one manifest: what was interpreted, or,
// where interpreting failed, what the previous entry said.
func manifestStatus(id workv1alpha1.ResourceIdentifier, got interpreted, prev *workv1alpha1.ManifestStatus) workv1alpha1.ManifestStatus {
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

// previous finds the entry of the same object in the current status.
func previous(statuses []workv1alpha1.ManifestStatus, id workv1alpha1.ResourceIdentifier) *workv1alpha1.ManifestStatus {
	for i := range statuses {
		if statuses[i].Identifier == id {
			return &statuses[i]
		}
	}
	return nil
}

// sameStatuses compares manifest statuses, their status as JSON values:
// the same status may come back from the API server formatted differently.
func sameStatuses(a, b []workv1alpha1.ManifestStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Identifier != b[i].Identifier || a[i].Health != b[i].Health || !sameRaw(a[i].Status, b[i].Status) {
			return false
		}
	}
	return true
}

// sameRaw compares two JSON documents by value.
func sameRaw(a, b *runtime.RawExtension) bool {
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
