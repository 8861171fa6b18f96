package overrides

import (
	"bytes"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// recordApplied writes the applied-overrides annotations in Karmada's shape,
// a JSON list of {policyName, overriders} with one entry per applied rule,
// ClusterOverridePolicies and OverridePolicies apart. An annotation copied
// from the template is dropped: it would claim overrides this cluster did
// not get.
func recordApplied(obj map[string]any, rules []*rule) error {
	var cops, ops [][]byte
	for _, r := range rules {
		if r.policy.ref.Kind == KindClusterOverridePolicy {
			cops = append(cops, r.compiled.record)
		} else {
			ops = append(ops, r.compiled.record)
		}
	}
	meta, err := metadataOf(obj, len(rules) > 0)
	if err != nil || meta == nil {
		return err
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		if len(rules) == 0 {
			return nil
		}
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	removed := setList(annotations, policyv1alpha1.AppliedClusterOverrides, cops)
	removed = setList(annotations, policyv1alpha1.AppliedOverrides, ops) || removed
	if removed && len(annotations) == 0 {
		delete(meta, "annotations")
	}
	return nil
}

// setList sets key to the JSON list of items, or deletes it when there are
// none, and reports whether it deleted a key.
func setList(annotations map[string]any, key string, items [][]byte) bool {
	if len(items) == 0 {
		_, ok := annotations[key]
		delete(annotations, key)
		return ok
	}
	n := 1
	for _, it := range items {
		n += len(it) + 1
	}
	var b bytes.Buffer
	b.Grow(n)
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	annotations[key] = b.String()
	return false
}
