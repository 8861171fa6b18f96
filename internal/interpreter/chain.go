package interpreter

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Chain asks its layers in order; the first that has a rule answers. It
// checks every answer (replica counts, object identity, dependency
// references) whichever layer gave it, so a bad script or webhook yields an
// error rather than a bad write. It is safe for concurrent use.
type Chain struct {
	layers  []Layer
	syncers []Syncer
}

var _ Interpreter = (*Chain)(nil)

// NewChain returns a chain of the given layers, asked in that order.
func NewChain(layers ...Layer) *Chain {
	c := &Chain{layers: layers}
	for _, l := range layers {
		if s, ok := l.(Syncer); ok {
			c.syncers = append(c.syncers, s)
		}
	}
	return c
}

// Layers returns the layers in the order they are asked.
func (c *Chain) Layers() []Layer { return c.layers }

// HookEnabled tells whether some layer has a rule for op on kind gvk.
func (c *Chain) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	for _, l := range c.layers {
		if l.HookEnabled(gvk, op) {
			return true
		}
	}
	return false
}

// HasSynced tells whether every watched layer has loaded its configuration.
func (c *Chain) HasSynced() bool {
	for _, s := range c.syncers {
		if !s.HasSynced() {
			return false
		}
	}
	return true
}

// GetReplicas implements Interpreter.
func (c *Chain) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	const op = configv1alpha1.InterpreterOperationInterpretReplica
	if err := c.ready(obj, op); err != nil {
		return 0, nil, err
	}
	for _, l := range c.layers {
		replicas, requires, handled, err := l.GetReplicas(ctx, obj)
		if !handled {
			continue
		}
		if err == nil {
			err = checkReplicas(replicas)
		}
		if err != nil {
			return 0, nil, failed(ctx, obj, op, l, err)
		}
		return replicas, requires, nil
	}
	return 0, nil, unsupported(obj, op)
}

// GetComponents implements Interpreter.
func (c *Chain) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	const op = configv1alpha1.InterpreterOperationInterpretComponent
	if err := c.ready(obj, op); err != nil {
		return nil, err
	}
	for _, l := range c.layers {
		components, handled, err := l.GetComponents(ctx, obj)
		if !handled {
			continue
		}
		if err == nil {
			err = checkComponents(components)
		}
		if err != nil {
			return nil, failed(ctx, obj, op, l, err)
		}
		return components, nil
	}
	return nil, unsupported(obj, op)
}

// ReviseReplica implements Interpreter.
func (c *Chain) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	const op = configv1alpha1.InterpreterOperationReviseReplica
	if err := c.ready(obj, op); err != nil {
		return nil, err
	}
	if replicas < 0 {
		return nil, fmt.Errorf("%s of %s: desired replicas %d is negative", op, describe(obj), replicas)
	}
	id := identify(obj)
	for _, l := range c.layers {
		revised, handled, err := l.ReviseReplica(ctx, obj, replicas)
		if !handled {
			continue
		}
		if err == nil {
			err = id.check(revised)
		}
		if err != nil {
			return nil, failed(ctx, obj, op, l, err)
		}
		return revised, nil
	}
	return nil, unsupported(obj, op)
}

// Retain implements Interpreter.
func (c *Chain) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	const op = configv1alpha1.InterpreterOperationRetain
	if err := c.ready(desired, op); err != nil {
		return nil, err
	}
	if observed == nil {
		return nil, fmt.Errorf("%s of %s: no observed object", op, describe(desired))
	}
	id := identify(desired)
	for _, l := range c.layers {
		retained, handled, err := l.Retain(ctx, desired, observed)
		if !handled {
			continue
		}
		if err == nil {
			err = id.check(retained)
		}
		if err != nil {
			return nil, failed(ctx, desired, op, l, err)
		}
		return retained, nil
	}
	return nil, unsupported(desired, op)
}

// AggregateStatus implements Interpreter.
func (c *Chain) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	const op = configv1alpha1.InterpreterOperationAggregateStatus
	if err := c.ready(obj, op); err != nil {
		return nil, err
	}
	id := identify(obj)
	for _, l := range c.layers {
		aggregated, handled, err := l.AggregateStatus(ctx, obj, items)
		if !handled {
			continue
		}
		if err == nil {
			err = id.check(aggregated)
		}
		if err != nil {
			return nil, failed(ctx, obj, op, l, err)
		}
		return aggregated, nil
	}
	return nil, unsupported(obj, op)
}

// ReflectStatus implements Interpreter.
func (c *Chain) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	const op = configv1alpha1.InterpreterOperationInterpretStatus
	if err := c.ready(obj, op); err != nil {
		return nil, err
	}
	for _, l := range c.layers {
		status, handled, err := l.ReflectStatus(ctx, obj)
		if !handled {
			continue
		}
		if err != nil {
			return nil, failed(ctx, obj, op, l, err)
		}
		return status, nil
	}
	return nil, unsupported(obj, op)
}

// InterpretHealth implements Interpreter.
func (c *Chain) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	const op = configv1alpha1.InterpreterOperationInterpretHealth
	if err := c.ready(obj, op); err != nil {
		return false, err
	}
	for _, l := range c.layers {
		healthy, handled, err := l.InterpretHealth(ctx, obj)
		if !handled {
			continue
		}
		if err != nil {
			return false, failed(ctx, obj, op, l, err)
		}
		return healthy, nil
	}
	return false, unsupported(obj, op)
}

// GetDependencies implements Interpreter.
func (c *Chain) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	const op = configv1alpha1.InterpreterOperationInterpretDependency
	if err := c.ready(obj, op); err != nil {
		return nil, err
	}
	for _, l := range c.layers {
		deps, handled, err := l.GetDependencies(ctx, obj)
		if !handled {
			continue
		}
		if err == nil {
			deps, err = normalizeDependencies(deps)
		}
		if err != nil {
			return nil, failed(ctx, obj, op, l, err)
		}
		return deps, nil
	}
	return nil, unsupported(obj, op)
}

func (c *Chain) ready(obj *unstructured.Unstructured, op configv1alpha1.InterpreterOperation) error {
	if obj == nil {
		return fmt.Errorf("%s: no object", op)
	}
	if !c.HasSynced() {
		return fmt.Errorf("%s of %s: %w", op, describe(obj), ErrNotReady)
	}
	return nil
}

// describe names an object in messages: "apps/v1 Deployment shop/web".
func describe(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return obj.GetAPIVersion() + " " + obj.GetKind() + " " + name
}

func failed(ctx context.Context, obj *unstructured.Unstructured, op configv1alpha1.InterpreterOperation, l Layer, err error) error {
	err = fmt.Errorf("%s of %s by the %s interpreter: %w", op, describe(obj), l.Name(), err)
	ctrl.LoggerFrom(ctx).V(2).Info("Interpreter failed", "operation", op, "layer", l.Name(), "error", err.Error())
	return err
}

func unsupported(obj *unstructured.Unstructured, op configv1alpha1.InterpreterOperation) error {
	return fmt.Errorf("%s of %s: %w", op, describe(obj), ErrNotSupported)
}
