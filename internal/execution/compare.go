package execution

import (
	"context"
	"fmt"
	"maps"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// Retained is desired with the member-owned fields of observed kept, as the
// resource interpreter's Retain says; desired itself is left untouched.
// Kinds without a Retain rule get desired as is: server-side apply already
// leaves alone every field the manifest does not set.
func Retained(ctx context.Context, interp interpreter.Interpreter, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if observed == nil || !interp.HookEnabled(desired.GroupVersionKind(), configv1alpha1.InterpreterOperationRetain) {
		return desired, nil
	}
	retained, err := interp.Retain(ctx, desired.DeepCopy(), observed)
	if err != nil {
		return nil, fmt.Errorf("retaining member fields: %w", err)
	}
	return retained, nil
}

// InSync reports whether observed already is what applying t would make
// it: it was applied from the same desired object (same hash) and still has
// every value that object, with the member-owned fields retained, sets. A
// member object edited behind the control plane's back fails the second
// test.
func InSync(ctx context.Context, interp interpreter.Interpreter, t Target, observed *unstructured.Unstructured) (bool, error) {
	if observed.GetAnnotations()[ManifestHashAnnotation] != t.Hash {
		return false, nil
	}
	want, err := Retained(ctx, interp, t.Desired, observed)
	if err != nil {
		return false, err
	}
	return Covers(withoutLastApplied(want.Object), observed.Object), nil
}

// withoutLastApplied is obj without kubectl's last-applied copy, sharing
// everything else with it. The member-object cache drops that annotation
// (compactForCache), so comparing it would find every template created with
// kubectl apply out of sync and rewrite it on each change the member makes;
// the hash annotation already says which manifest was applied.
func withoutLastApplied(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if _, ok := annotations[lastAppliedAnnotation]; !ok {
		return obj
	}
	out := maps.Clone(obj)
	outMeta := maps.Clone(meta)
	outAnnotations := maps.Clone(annotations)
	delete(outAnnotations, lastAppliedAnnotation)
	outMeta["annotations"] = outAnnotations
	out["metadata"] = outMeta
	return out
}

// Covers reports whether observed has every value desired sets. Fields
// only observed has (defaults, member-owned fields, status) do not matter.
// Lists must match element by element. A zero value in desired (empty
// string, false, 0, empty list or map, null) matches an absent field, since
// the API server drops those when it serializes. Numbers compare by value,
// and strings that are both quantities compare as quantities ("1000m" is
// what the server turns into "1").
func Covers(desired, observed any) bool {
	switch d := desired.(type) {
	case map[string]any:
		o, ok := observed.(map[string]any)
		if !ok {
			return observed == nil && len(d) == 0
		}
		for k, dv := range d {
			ov, present := o[k]
			if !present {
				if isZero(dv) {
					continue
				}
				return false
			}
			if !Covers(dv, ov) {
				return false
			}
		}
		return true
	case []any:
		o, ok := observed.([]any)
		if !ok {
			return observed == nil && len(d) == 0
		}
		if len(d) != len(o) {
			return false
		}
		for i := range d {
			if !Covers(d[i], o[i]) {
				return false
			}
		}
		return true
	case string:
		o, ok := observed.(string)
		if !ok {
			return observed == nil && d == ""
		}
		return d == o || sameQuantity(d, o)
	case nil:
		return observed == nil || isZero(observed)
	case bool:
		o, ok := observed.(bool)
		return (ok && o == d) || (observed == nil && !d)
	}
	if di, ok := desired.(int64); ok {
		if oi, ok := observed.(int64); ok {
			// Exact: float64 would round large integers.
			return di == oi
		}
	}
	if dn, ok := number(desired); ok {
		on, ok := number(observed)
		return (ok && dn == on) || (observed == nil && dn == 0)
	}
	return false
}

// isZero tells the values an API server omits when serializing.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	n, ok := number(v)
	return ok && n == 0
}

// number reads a JSON number as decoded into unstructured objects (int64 or
// float64) or as set by code.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	case float32:
		return float64(x), true
	}
	return 0, false
}

func sameQuantity(a, b string) bool {
	qa, err := resource.ParseQuantity(a)
	if err != nil {
		return false
	}
	qb, err := resource.ParseQuantity(b)
	if err != nil {
		return false
	}
	return qa.Cmp(qb) == 0
}
