package luarules

import (
	"encoding/json"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/lua"
)

// resultError reports a return value of the wrong shape in the VM's format,
// naming the script (customization and rule) and the function.
func resultError(script lua.Script, function string, format string, args ...any) error {
	return &lua.Error{Script: script.Name, Function: function, Message: fmt.Sprintf(format, args...), Err: lua.ErrConversion}
}

func replicasResult(script lua.Script, function string, res lua.Results) (int32, *workv1alpha2.ReplicaRequirements, error) {
	n, err := res.Int64(0)
	if err != nil {
		return 0, nil, err
	}
	if n < 0 || n > math.MaxInt32 {
		return 0, nil, resultError(script, function, "return value #1: replica %d is out of range", n)
	}
	if res.IsNil(1) {
		return int32(n), nil, nil
	}
	m, err := res.Object(1)
	if err != nil {
		return 0, nil, err
	}
	requires, err := requirementsFrom(m)
	if err != nil {
		return 0, nil, resultError(script, function, "return value #2 is not replica requirements: %v", err)
	}
	return int32(n), requires, nil
}

// listResult converts a list result into a typed slice.
func listResult(script lua.Script, function string, res lua.Results, into any) error {
	if res.IsNil(0) {
		return nil
	}
	list, err := res.List(0)
	if err != nil {
		return err
	}
	data, err := json.Marshal(list)
	if err == nil {
		err = json.Unmarshal(data, into)
	}
	if err != nil {
		return resultError(script, function, "return value #1 has the wrong shape: %v", err)
	}
	return nil
}

// objectResult converts a returned object, which must be the object the
// script was given (same apiVersion, kind, namespace and name); hints
// resolve empty tables the script created itself.
func objectResult(script lua.Script, function string, res lua.Results, in *unstructured.Unstructured, hints ...any) (*unstructured.Unstructured, error) {
	m, err := res.Object(0, hints...)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{Object: m}
	for _, f := range []struct{ name, got, want string }{
		{"apiVersion", out.GetAPIVersion(), in.GetAPIVersion()},
		{"kind", out.GetKind(), in.GetKind()},
		{"metadata.namespace", out.GetNamespace(), in.GetNamespace()},
		{"metadata.name", out.GetName(), in.GetName()},
	} {
		if f.got != f.want {
			return nil, resultError(script, function, "return value #1: %s is %q, not %q: the result must be the object given",
				f.name, f.got, f.want)
		}
	}
	return out, nil
}

func statusResult(script lua.Script, function string, res lua.Results, hint any) (*runtime.RawExtension, error) {
	if res.IsNil(0) {
		return nil, nil
	}
	m, err := res.Object(0, hint)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, resultError(script, function, "return value #1: %v", err)
	}
	return &runtime.RawExtension{Raw: data}, nil
}

// statusItems gives AggregateStatus its statusItems argument: one
// {clusterName, status, applied, appliedMessage, health} per member, as
// Karmada passes them (fields left out when empty, as in their JSON). No
// items is nil, not an empty list: Karmada's binding holds no aggregated
// status until a member reports, its JSON is null, and scripts test
// `statusItems == nil` to return the object untouched.
func statusItems(script lua.Script, items []workv1alpha2.AggregatedStatusItem) (any, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := make([]any, len(items))
	for i := range items {
		item := &items[i]
		m := make(map[string]any, 4)
		m["clusterName"] = item.ClusterName
		if item.Status != nil && len(item.Status.Raw) > 0 {
			var status any
			if err := utiljson.Unmarshal(item.Status.Raw, &status); err != nil {
				return nil, &lua.Error{Script: script.Name, Function: "AggregateStatus",
					Message: fmt.Sprintf("status of cluster %s: %v", item.ClusterName, err), Err: lua.ErrConversion}
			}
			m["status"] = status
		}
		if item.Applied {
			m["applied"] = true
		}
		if item.AppliedMessage != "" {
			m["appliedMessage"] = item.AppliedMessage
		}
		if item.Health != "" {
			m["health"] = string(item.Health)
		}
		out[i] = m
	}
	return out, nil
}
