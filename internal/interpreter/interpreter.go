package interpreter

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// ErrNotSupported is returned (wrapped) when no layer has a rule for the
// object's kind and the operation; HookEnabled would have said false.
var ErrNotSupported = errors.New("no interpreter rule for this kind and operation")

// ErrNotReady is returned (wrapped) while a watched layer has not loaded
// its configuration yet; answering then could silently use a rule the user
// overrode.
var ErrNotReady = errors.New("interpreter not ready: configuration not synced yet")

// Interpreter is what controllers, the scheduler and the CLI use.
type Interpreter interface {
	// HookEnabled tells whether some rule answers op for objects of kind gvk.
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	// GetReplicas returns the replicas of a template and what each needs
	// (nil when nothing is known).
	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error)
	// GetComponents returns the components of a multi-template workload.
	GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]workv1alpha2.Component, error)
	// ReviseReplica returns obj with its replicas set to replicas.
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error)
	// Retain returns desired with the member-owned fields of observed kept.
	Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// AggregateStatus returns obj with the members' statuses folded into
	// its status.
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error)
	// ReflectStatus returns the part of a member object's status to record
	// in its Work; nil when there is none.
	ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, error)
	// InterpretHealth tells whether a member object is healthy.
	InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error)
	// GetDependencies lists the objects a template needs in the same
	// clusters, sorted and without duplicates.
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error)
}

// Layer is one source of rules in a Chain. Each call reports whether the
// layer had a rule (handled); a layer without one returns false and the
// chain asks the next. A layer that has a rule and fails returns the error
// with handled true: the chain does not fall through, so a broken
// customization never silently gives way to a default.
type Layer interface {
	// Name labels the layer in errors and logs ("customization", "webhook",
	// "bundled", "native").
	Name() string
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (replicas int32, requires *workv1alpha2.ReplicaRequirements, handled bool, err error)
	GetComponents(ctx context.Context, obj *unstructured.Unstructured) (components []workv1alpha2.Component, handled bool, err error)
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (revised *unstructured.Unstructured, handled bool, err error)
	Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (retained *unstructured.Unstructured, handled bool, err error)
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (aggregated *unstructured.Unstructured, handled bool, err error)
	ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (status *runtime.RawExtension, handled bool, err error)
	InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (healthy, handled bool, err error)
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) (deps []configv1alpha1.DependentObjectReference, handled bool, err error)
}

// Syncer is implemented by layers fed from the API server; a chain refuses
// to answer until every such layer has synced.
type Syncer interface {
	HasSynced() bool
}
