package luarules

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/lua"
)

// Set answers interpreter operations with the merged Lua rules of some
// kinds. It is immutable; a changed configuration makes a new Set.
type Set struct {
	name  string
	vm    *lua.VM
	kinds map[schema.GroupVersionKind]*Kind
}

// NewSet returns a Set named name (the layer name in errors) running kinds'
// scripts in vm.
func NewSet(name string, vm *lua.VM, kinds map[schema.GroupVersionKind]*Kind) *Set {
	if kinds == nil {
		kinds = map[schema.GroupVersionKind]*Kind{}
	}
	return &Set{name: name, vm: vm, kinds: kinds}
}

// Name implements interpreter.Layer.
func (s *Set) Name() string { return s.name }

// Kind returns the rules of gvk, nil when there are none.
func (s *Set) Kind(gvk schema.GroupVersionKind) *Kind { return s.kinds[gvk] }

// Kinds returns the number of kinds with rules.
func (s *Set) Kinds() int { return len(s.kinds) }

// HookEnabled implements interpreter.Layer.
func (s *Set) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	k := s.kinds[gvk]
	if k == nil {
		return false
	}
	_, ok := k.Script(op)
	return ok
}

func (s *Set) script(obj *unstructured.Unstructured, op configv1alpha1.InterpreterOperation) (lua.Script, bool) {
	if obj == nil || len(s.kinds) == 0 {
		return lua.Script{}, false
	}
	k := s.kinds[obj.GroupVersionKind()]
	if k == nil {
		return lua.Script{}, false
	}
	return k.Script(op)
}

// GetReplicas calls GetReplicas(obj), which returns replica, requires.
func (s *Set) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, bool, error) {
	script, ok := s.script(obj, configv1alpha1.InterpreterOperationInterpretReplica)
	if !ok {
		return 0, nil, false, nil
	}
	res, err := s.vm.Call(ctx, script, configv1alpha1.LuaFuncGetReplicas, 2, obj.Object)
	if err != nil {
		return 0, nil, true, err
	}
	replicas, requires, err := replicasResult(script, configv1alpha1.LuaFuncGetReplicas, res.Shared())
	return replicas, requires, true, err
}

// GetComponents calls GetComponents(obj), which returns a list of
// {name, replicas, replicaRequirements}.
func (s *Set) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]workv1alpha2.Component, bool, error) {
	script, ok := s.script(obj, configv1alpha1.InterpreterOperationInterpretComponent)
	if !ok {
		return nil, false, nil
	}
	res, err := s.vm.Call(ctx, script, configv1alpha1.LuaFuncGetComponents, 1, obj.Object)
	if err != nil {
		return nil, true, err
	}
	var components []workv1alpha2.Component
	err = listResult(script, configv1alpha1.LuaFuncGetComponents, res.Shared(), &components)
	return components, true, err
}

// ReviseReplica calls ReviseReplica(obj, desiredReplica), which returns the
// revised object. The result shares what the script left alone with obj.
func (s *Set) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, bool, error) {
	script, ok := s.script(obj, configv1alpha1.InterpreterOperationReviseReplica)
	if !ok {
		return nil, false, nil
	}
	res, err := s.vm.Call(ctx, script, configv1alpha1.LuaFuncReviseReplica, 1, obj.Object, replicas)
	if err != nil {
		return nil, true, err
	}
	out, err := objectResult(script, configv1alpha1.LuaFuncReviseReplica, res.Shared(), obj, obj.Object)
	return out, true, err
}

// Retain calls Retain(desiredObj, observedObj), which returns the object to
// apply. Nothing of observed is shared with the result.
func (s *Set) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	script, ok := s.script(desired, configv1alpha1.InterpreterOperationRetain)
	if !ok {
		return nil, false, nil
	}
	res, err := s.vm.Call(ctx, script, configv1alpha1.LuaFuncRetain, 1, desired.Object, observed.Object)
	if err != nil {
		return nil, true, err
	}
	out, err := objectResult(script, configv1alpha1.LuaFuncRetain, res, desired, desired.Object, observed.Object)
	return out, true, err
}

// AggregateStatus calls AggregateStatus(desiredObj, statusItems), which
// returns the object with its status aggregated.
func (s *Set) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, bool, error) {
	script, ok := s.script(obj, configv1alpha1.InterpreterOperationAggregateStatus)
	if !ok {
		return nil, false, nil
	}
	args, err := statusItems(script, items)
	if err != nil {
		return nil, true, err
	}
	res, err := s.vm.Call(ctx, script, configv1alpha1.LuaFuncAggregateStatus, 1, obj.Object, args)
	if err != nil {
		return nil, true, err
	}
	// Karmada converts this result without a reference object, which
	// deletes its empty values (see lua.Results.DropEmpty).
	out, err := objectResult(script, configv1alpha1.LuaFuncAggregateStatus, res.Shared().DropEmpty(), obj, obj.Object)
	return out, true, err
}

// ReflectStatus calls ReflectStatus(observedObj), which returns the status
// to record (nil for none).
func (s *Set) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, bool, error) {
	script, ok := s.script(obj, configv1alpha1.InterpreterOperationInterpretStatus)
	if !ok {
		return nil, false, nil
	}
	res, err := s.vm.Call(ctx, script, configv1alpha1.LuaFuncReflectStatus, 1, obj.Object)
	if err != nil {
		return nil, true, err
	}
	// No reference object here either: empty values are deleted.
	status, err := statusResult(script, configv1alpha1.LuaFuncReflectStatus, res.Shared().DropEmpty(), obj.Object["status"])
	return status, true, err
}

// InterpretHealth calls InterpretHealth(observedObj), which returns a
// boolean.
func (s *Set) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, bool, error) {
	script, ok := s.script(obj, configv1alpha1.InterpreterOperationInterpretHealth)
	if !ok {
		return false, false, nil
	}
	res, err := s.vm.Call(ctx, script, configv1alpha1.LuaFuncInterpretHealth, 1, obj.Object)
	if err != nil {
		return false, true, err
	}
	healthy, err := res.Bool(0)
	return healthy, true, err
}

// GetDependencies calls GetDependencies(desiredObj), which returns a list
// of {apiVersion, kind, namespace, name, labelSelector}, in the script of
// every customization defining it, and returns all they name (the caller
// drops duplicates).
func (s *Set) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, bool, error) {
	if _, ok := s.script(obj, configv1alpha1.InterpreterOperationInterpretDependency); !ok {
		return nil, false, nil
	}
	var all []configv1alpha1.DependentObjectReference
	for _, script := range s.kinds[obj.GroupVersionKind()].dependencyScripts() {
		res, err := s.vm.Call(ctx, script, configv1alpha1.LuaFuncGetDependencies, 1, obj.Object)
		if err != nil {
			return nil, true, err
		}
		var deps []configv1alpha1.DependentObjectReference
		if err := listResult(script, configv1alpha1.LuaFuncGetDependencies, res.Shared(), &deps); err != nil {
			return nil, true, err
		}
		if all == nil {
			// One rule's answer is returned as it is: an empty list stays
			// one, as the golden cases expect.
			all = deps
			continue
		}
		all = append(all, deps...)
	}
	return all, true, nil
}
