package webhook

import (
	"context"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Name implements interpreter.Layer.
func (s *Store) Name() string { return LayerName }

// HookEnabled implements interpreter.Layer.
func (s *Store) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return s.match(gvk, op) != nil
}

// ask sends op about obj to the matching webhook; nil, false when none
// matches.
func (s *Store) ask(ctx context.Context, op configv1alpha1.InterpreterOperation, obj, observed *unstructured.Unstructured,
	fill func(*configv1alpha1.ResourceInterpreterRequest)) (*configv1alpha1.ResourceInterpreterResponse, bool, error) {
	if obj == nil {
		return nil, false, nil
	}
	h := s.match(obj.GroupVersionKind(), op)
	if h == nil {
		return nil, false, nil
	}
	req, err := request(op, obj, observed)
	if err != nil {
		return nil, true, err
	}
	if fill != nil {
		fill(req)
	}
	resp, err := h.call(ctx, req)
	return resp, true, err
}

// GetReplicas implements interpreter.Layer.
func (s *Store) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, bool, error) {
	resp, handled, err := s.ask(ctx, configv1alpha1.InterpreterOperationInterpretReplica, obj, nil, nil)
	if !handled || err != nil {
		return 0, nil, handled, err
	}
	if resp.Replicas == nil {
		return 0, nil, true, fmt.Errorf("%w: answer to InterpretReplica has no replicas", ErrWebhook)
	}
	return *resp.Replicas, resp.ReplicaRequirements, true, nil
}

// GetComponents implements interpreter.Layer.
func (s *Store) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]workv1alpha2.Component, bool, error) {
	resp, handled, err := s.ask(ctx, configv1alpha1.InterpreterOperationInterpretComponent, obj, nil, nil)
	if !handled || err != nil {
		return nil, handled, err
	}
	return resp.Components, true, nil
}

// ReviseReplica implements interpreter.Layer: the webhook answers with a
// patch to the object.
func (s *Store) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, bool, error) {
	if replicas > int64(^uint32(0)>>1) {
		return nil, true, fmt.Errorf("replicas %d out of range", replicas)
	}
	n := int32(replicas)
	resp, handled, err := s.ask(ctx, configv1alpha1.InterpreterOperationReviseReplica, obj, nil,
		func(r *configv1alpha1.ResourceInterpreterRequest) { r.DesiredReplicas = &n })
	if !handled || err != nil {
		return nil, handled, err
	}
	out, err := applyPatch(obj, resp)
	return out, true, err
}

// Retain implements interpreter.Layer: the webhook answers with a patch to
// the desired object.
func (s *Store) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	resp, handled, err := s.ask(ctx, configv1alpha1.InterpreterOperationRetain, desired, observed, nil)
	if !handled || err != nil {
		return nil, handled, err
	}
	out, err := applyPatch(desired, resp)
	return out, true, err
}

// AggregateStatus implements interpreter.Layer: the webhook answers with a
// patch to the object.
func (s *Store) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, bool, error) {
	resp, handled, err := s.ask(ctx, configv1alpha1.InterpreterOperationAggregateStatus, obj, nil,
		func(r *configv1alpha1.ResourceInterpreterRequest) { r.AggregatedStatus = items })
	if !handled || err != nil {
		return nil, handled, err
	}
	out, err := applyPatch(obj, resp)
	return out, true, err
}

// ReflectStatus implements interpreter.Layer.
func (s *Store) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, bool, error) {
	resp, handled, err := s.ask(ctx, configv1alpha1.InterpreterOperationInterpretStatus, obj, obj, nil)
	if !handled || err != nil {
		return nil, handled, err
	}
	if resp.RawStatus == nil || len(resp.RawStatus.Raw) == 0 {
		return nil, true, nil
	}
	return &runtime.RawExtension{Raw: resp.RawStatus.Raw}, true, nil
}

// InterpretHealth implements interpreter.Layer.
func (s *Store) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, bool, error) {
	resp, handled, err := s.ask(ctx, configv1alpha1.InterpreterOperationInterpretHealth, obj, obj, nil)
	if !handled || err != nil {
		return false, handled, err
	}
	if resp.Healthy == nil {
		return false, true, fmt.Errorf("%w: answer to InterpretHealth has no healthy", ErrWebhook)
	}
	return *resp.Healthy, true, nil
}

// GetDependencies implements interpreter.Layer.
func (s *Store) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, bool, error) {
	resp, handled, err := s.ask(ctx, configv1alpha1.InterpreterOperationInterpretDependency, obj, nil, nil)
	if !handled || err != nil {
		return nil, handled, err
	}
	return resp.Dependencies, true, nil
}

// applyPatch applies the answer's JSON patch to obj and returns the result
// as a new object; no patch leaves obj as it is.
func applyPatch(obj *unstructured.Unstructured, resp *configv1alpha1.ResourceInterpreterResponse) (*unstructured.Unstructured, error) {
	if len(resp.Patch) == 0 {
		return obj, nil
	}
	if resp.PatchType == nil || *resp.PatchType != configv1alpha1.PatchTypeJSONPatch {
		got := "none"
		if resp.PatchType != nil {
			got = string(*resp.PatchType)
		}
		return nil, fmt.Errorf("%w: patch type %q is not supported (only %s)", ErrWebhook, got, configv1alpha1.PatchTypeJSONPatch)
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return nil, fmt.Errorf("%w: decoding patch: %w", ErrWebhook, err)
	}
	doc, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding object: %w", err)
	}
	patched, err := patch.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: applying patch: %w", ErrWebhook, err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(patched, &m); err != nil {
		return nil, fmt.Errorf("%w: patched object: %w", ErrWebhook, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
