package native

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

// Helpers that read unstructured objects without copying. A missing field
// is not an error; a field of the wrong type is, with its dotted path.

// lookup follows fields and returns the value, or nil when a field on the
// way is missing.
func lookup(m map[string]any, fields ...string) (any, error) {
	var cur any = m
	for i, f := range fields {
		mm, ok := cur.(map[string]any)
		if !ok {
			if cur == nil {
				return nil, nil
			}
			return nil, fieldError(strings.Join(fields[:i], "."), "an object", cur)
		}
		cur = mm[f]
	}
	return cur, nil
}

func nestedMap(m map[string]any, fields ...string) (map[string]any, error) {
	v, err := lookup(m, fields...)
	if err != nil || v == nil {
		return nil, err
	}
	mm, ok := v.(map[string]any)
	if !ok {
		return nil, fieldError(strings.Join(fields, "."), "an object", v)
	}
	return mm, nil
}

func nestedSlice(m map[string]any, fields ...string) ([]any, error) {
	v, err := lookup(m, fields...)
	if err != nil || v == nil {
		return nil, err
	}
	s, ok := v.([]any)
	if !ok {
		return nil, fieldError(strings.Join(fields, "."), "a list", v)
	}
	return s, nil
}

func nestedString(m map[string]any, fields ...string) (string, error) {
	v, err := lookup(m, fields...)
	if err != nil || v == nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fieldError(strings.Join(fields, "."), "a string", v)
	}
	return s, nil
}

// nestedInt returns an integer field and whether it is set.
func nestedInt(m map[string]any, fields ...string) (int64, bool, error) {
	v, err := lookup(m, fields...)
	if err != nil || v == nil {
		return 0, false, err
	}
	n, ok := toInt64(v)
	if !ok {
		return 0, false, fieldError(strings.Join(fields, "."), "an integer", v)
	}
	return n, true, nil
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}

// int32Field reads an int32 field (replica counts), def when unset.
func int32Field(m map[string]any, def int32, fields ...string) (int32, error) {
	n, ok, err := nestedInt(m, fields...)
	if err != nil || !ok {
		return def, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s: %d is out of range", strings.Join(fields, "."), n)
	}
	return int32(n), nil
}

// ensureMap returns m[key] as a map, creating it (and replacing a nil) when
// missing.
func ensureMap(m map[string]any, key string) (map[string]any, error) {
	switch v := m[key].(type) {
	case map[string]any:
		return v, nil
	case nil:
		mm := map[string]any{}
		m[key] = mm
		return mm, nil
	default:
		return nil, fieldError(key, "an object", v)
	}
}

// stringMap converts a map of strings (labels, node selectors).
func stringMap(v any, path string) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fieldError(path, "an object", v)
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			return nil, fieldError(path+"."+k, "a string", e)
		}
		out[k] = s
	}
	return out, nil
}

// fromUnstructured converts a small part of an object into a typed value.
func fromUnstructured(v any, into any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		// Lists and scalars go through JSON; they are rare and small.
		data, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(data, into)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// copyJSON deep-copies a value taken from another object. Unlike
// runtime.DeepCopyJSONValue it does not panic on Go types that are not
// JSON's (they are shared as they are, being immutable scalars).
func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	}
	return v
}

func marshalStatus(status map[string]any) (*runtime.RawExtension, error) {
	data, err := json.Marshal(status)
	if err != nil {
		return nil, fmt.Errorf("encoding status: %w", err)
	}
	return &runtime.RawExtension{Raw: data}, nil
}

// containsJSON tells whether list holds a value equal to v.
func containsJSON(list []any, v any) bool {
	for _, e := range list {
		if equality.Semantic.DeepEqual(e, v) {
			return true
		}
	}
	return false
}
