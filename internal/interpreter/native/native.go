// Package native holds the interpreter's built-in rules for Kubernetes'
// own kinds: the last layer of the chain. Rules work on the unstructured
// maps directly and convert to typed API structs only the small parts they
// need, which keeps a call in the low microseconds.
package native

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

type (
	replicaFunc   func(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error)
	reviseFunc    func(obj *unstructured.Unstructured, replicas int64) error
	retainFunc    func(desired, observed *unstructured.Unstructured) error
	aggregateFunc func(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error
	reflectFunc   func(obj *unstructured.Unstructured) (map[string]any, error)
	healthFunc    func(obj *unstructured.Unstructured) (bool, error)
	depsFunc      func(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error)
)

// Interpreter answers for built-in kinds. Create it with New; it is
// immutable and safe for concurrent use.
type Interpreter struct {
	replicas  map[schema.GroupVersionKind]replicaFunc
	revise    map[schema.GroupVersionKind]reviseFunc
	retain    map[schema.GroupVersionKind]retainFunc
	aggregate map[schema.GroupVersionKind]aggregateFunc
	reflect   map[schema.GroupVersionKind]reflectFunc
	health    map[schema.GroupVersionKind]healthFunc
	deps      map[schema.GroupVersionKind]depsFunc
}

// Kinds the native rules know.
var (
	appsV1         = schema.GroupVersion{Group: "apps", Version: "v1"}
	deploymentGVK  = appsV1.WithKind("Deployment")
	replicaSetGVK  = appsV1.WithKind("ReplicaSet")
	statefulSetGVK = appsV1.WithKind("StatefulSet")
	daemonSetGVK   = appsV1.WithKind("DaemonSet")
	jobGVK         = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	cronJobGVK     = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}
	podGVK         = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	serviceGVK     = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	saGVK          = schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}
	pvcGVK         = schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}
	pvGVK          = schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolume"}
	ingressGVK     = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}
	svcImportGVK   = schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceImport"}
	pdbGVK         = schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}
	hpaV2GVK       = schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}
	hpaV1GVK       = schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"}
)

// New returns the native rules.
func New() *Interpreter {
	return &Interpreter{
		replicas:  replicaRules(),
		revise:    reviseRules(),
		retain:    retainRules(),
		aggregate: aggregateRules(),
		reflect:   reflectRules(),
		health:    healthRules(),
		deps:      dependencyRules(),
	}
}

// Name implements interpreter.Layer.
func (*Interpreter) Name() string { return "native" }

// HookEnabled tells whether a native rule answers op for kind gvk. Status
// reflection is enabled for every kind: kinds without their own rule
// reflect their whole .status, as in Karmada.
func (n *Interpreter) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	var ok bool
	switch op {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		_, ok = n.replicas[gvk]
	case configv1alpha1.InterpreterOperationReviseReplica:
		_, ok = n.revise[gvk]
	case configv1alpha1.InterpreterOperationRetain:
		_, ok = n.retain[gvk]
	case configv1alpha1.InterpreterOperationAggregateStatus:
		_, ok = n.aggregate[gvk]
	case configv1alpha1.InterpreterOperationInterpretStatus:
		ok = true
	case configv1alpha1.InterpreterOperationInterpretHealth:
		_, ok = n.health[gvk]
	case configv1alpha1.InterpreterOperationInterpretDependency:
		_, ok = n.deps[gvk]
	}
	return ok
}

// GetReplicas implements interpreter.Layer.
func (n *Interpreter) GetReplicas(_ context.Context, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, bool, error) {
	f, ok := n.replicas[obj.GroupVersionKind()]
	if !ok {
		return 0, nil, false, nil
	}
	replicas, requires, err := f(obj)
	return replicas, requires, true, err
}

// GetComponents implements interpreter.Layer; no built-in kind has
// components.
func (n *Interpreter) GetComponents(context.Context, *unstructured.Unstructured) ([]workv1alpha2.Component, bool, error) {
	return nil, false, nil
}

// ReviseReplica implements interpreter.Layer. It sets the count on obj
// itself and returns it.
func (n *Interpreter) ReviseReplica(_ context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, bool, error) {
	f, ok := n.revise[obj.GroupVersionKind()]
	if !ok {
		return nil, false, nil
	}
	if err := f(obj, replicas); err != nil {
		return nil, true, err
	}
	return obj, true, nil
}

// Retain implements interpreter.Layer. It changes desired itself, copying
// what it takes from observed.
func (n *Interpreter) Retain(_ context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	f, ok := n.retain[desired.GroupVersionKind()]
	if !ok {
		return nil, false, nil
	}
	if err := f(desired, observed); err != nil {
		return nil, true, err
	}
	return desired, true, nil
}

// AggregateStatus implements interpreter.Layer. It replaces obj's status.
func (n *Interpreter) AggregateStatus(_ context.Context, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, bool, error) {
	f, ok := n.aggregate[obj.GroupVersionKind()]
	if !ok {
		return nil, false, nil
	}
	if err := f(obj, items); err != nil {
		return nil, true, err
	}
	return obj, true, nil
}

// ReflectStatus implements interpreter.Layer.
func (n *Interpreter) ReflectStatus(_ context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, bool, error) {
	f, ok := n.reflect[obj.GroupVersionKind()]
	if !ok {
		f = reflectWholeStatus
	}
	status, err := f(obj)
	if err != nil || status == nil {
		return nil, true, err
	}
	raw, err := marshalStatus(status)
	return raw, true, err
}

// InterpretHealth implements interpreter.Layer.
func (n *Interpreter) InterpretHealth(_ context.Context, obj *unstructured.Unstructured) (bool, bool, error) {
	f, ok := n.health[obj.GroupVersionKind()]
	if !ok {
		return false, false, nil
	}
	healthy, err := f(obj)
	return healthy, true, err
}

// GetDependencies implements interpreter.Layer.
func (n *Interpreter) GetDependencies(_ context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, bool, error) {
	f, ok := n.deps[obj.GroupVersionKind()]
	if !ok {
		return nil, false, nil
	}
	deps, err := f(obj)
	return deps, true, err
}

// fieldError reports a field of the wrong type.
func fieldError(path string, want string, got any) error {
	return fmt.Errorf("%s: expected %s, got %T", path, want, got)
}
