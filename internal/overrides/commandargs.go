package overrides

import (
	"fmt"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// applyCommandArgsOverrider changes field ("command" or "args") of the
// containers named o.ContainerName in a known workload kind. As in Karmada,
// init containers are not searched and a missing container is not an error:
// one policy often covers workloads that differ in their sidecars.
func applyCommandArgsOverrider(obj map[string]any, kind, field string, o *policyv1alpha1.CommandArgsOverrider) error {
	specPath := podSpecPath(kind)
	if specPath == "" {
		return nil
	}
	spec, ok, err := walkMap(obj, specPath)
	if err != nil || !ok {
		return err
	}
	list, err := containerList(spec, specPath, "containers")
	if err != nil {
		return err
	}
	for i, c := range list {
		container, ok := c.(map[string]any)
		if !ok || container["name"] != o.ContainerName {
			continue
		}
		path := containerPath(specPath, "containers", i) + "/" + field
		if err := overrideStrings(container, field, o); err != nil {
			return &pathError{path: path, err: err}
		}
	}
	return nil
}

// overrideStrings appends o.Value to, or drops every occurrence of each of
// o.Value from, the string list container[field].
func overrideStrings(container map[string]any, field string, o *policyv1alpha1.CommandArgsOverrider) error {
	var cur []any
	if v, ok := container[field]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("is %s, not an array", typeName(v))
		}
		cur = list
	}
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd:
		if len(o.Value) == 0 {
			return nil
		}
		out := make([]any, 0, len(cur)+len(o.Value))
		out = append(out, cur...)
		for _, v := range o.Value {
			out = append(out, v)
		}
		container[field] = out
	case policyv1alpha1.OverriderOpRemove:
		if cur == nil {
			return nil
		}
		out := make([]any, 0, len(cur))
		for _, v := range cur {
			s, ok := v.(string)
			if ok && contains(o.Value, s) {
				continue
			}
			out = append(out, v)
		}
		container[field] = out
	default:
		return fmt.Errorf("unknown operator %q (command and args take add or remove)", o.Operator)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
