package overrides

import (
	"fmt"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// applyLabelAnnotationOverrider changes metadata.<field> (labels or
// annotations) the way Karmada does: add sets every key, replace changes only
// keys already present, remove deletes the keys present (values ignored).
// Neither replace nor remove of a missing key is an error.
func applyLabelAnnotationOverrider(obj map[string]any, field string, o *policyv1alpha1.LabelAnnotationOverrider) error {
	path := "/metadata/" + field
	meta, err := metadataOf(obj, o.Operator == policyv1alpha1.OverriderOpAdd)
	if err != nil || meta == nil {
		return err
	}
	var m map[string]any
	switch v := meta[field].(type) {
	case nil:
	case map[string]any:
		m = v
	default:
		return &pathError{path: path, err: fmt.Errorf("is %s, not an object", typeName(v))}
	}
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd:
		if len(o.Value) == 0 {
			return nil
		}
		if m == nil {
			m = make(map[string]any, len(o.Value))
			meta[field] = m
		}
		for k, v := range o.Value {
			m[k] = v
		}
	case policyv1alpha1.OverriderOpReplace:
		for k, v := range o.Value {
			if _, ok := m[k]; ok {
				m[k] = v
			}
		}
	case policyv1alpha1.OverriderOpRemove:
		if m == nil {
			return nil
		}
		for k := range o.Value {
			delete(m, k)
		}
		// An emptied map is dropped so that remove undoes add exactly.
		if len(m) == 0 {
			delete(meta, field)
		}
	default:
		return &pathError{path: path, err: fmt.Errorf("unknown operator %q", o.Operator)}
	}
	return nil
}

// metadataOf returns obj.metadata, creating it when create is set.
func metadataOf(obj map[string]any, create bool) (map[string]any, error) {
	switch v := obj["metadata"].(type) {
	case map[string]any:
		return v, nil
	case nil:
		if !create {
			return nil, nil
		}
		m := map[string]any{}
		obj["metadata"] = m
		return m, nil
	default:
		return nil, &pathError{path: "/metadata", err: fmt.Errorf("is %s, not an object", typeName(v))}
	}
}
