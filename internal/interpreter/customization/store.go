// Package customization keeps the ResourceInterpreterCustomizations of the
// API server and answers interpreter operations with their Lua rules: the
// first layer of the interpreter chain. Several customizations for the same
// kind are merged rule by rule; when two define the same rule, the first by
// name wins, except dependencyInterpretation: the dependencies are those all
// of them name, as in Karmada.
package customization

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

// LayerName is the name of this layer in errors and logs.
const LayerName = "customization"

// Store holds the current customizations. Readers see an immutable
// snapshot, swapped atomically on every change, so a call never blocks on
// an update and never sees half of one.
type Store struct {
	vm *lua.VM

	mu     sync.Mutex // serializes changes
	byName map[string]*configv1alpha1.ResourceInterpreterCustomization

	set atomic.Pointer[luarules.Set]
	reg atomic.Pointer[toolscache.ResourceEventHandlerRegistration]
}

// NewStore returns an empty store whose scripts run in vm.
func NewStore(vm *lua.VM) *Store {
	s := &Store{vm: vm, byName: map[string]*configv1alpha1.ResourceInterpreterCustomization{}}
	s.set.Store(luarules.NewSet(LayerName, vm, nil))
	return s
}

// Apply adds or replaces a customization (by name).
func (s *Store) Apply(ctx context.Context, c *configv1alpha1.ResourceInterpreterCustomization) {
	log := ctrl.LoggerFrom(ctx).WithValues("customization", c.Name)
	for _, err := range luarules.Compile(c) {
		log.Error(err, "Customization rule does not compile; calls using it will fail")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byName[c.Name] = c
	s.rebuild(log)
}

// Delete removes a customization.
func (s *Store) Delete(ctx context.Context, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byName[name]; !ok {
		return
	}
	delete(s.byName, name)
	s.rebuild(ctrl.LoggerFrom(ctx).WithValues("customization", name))
}

// Customizations returns the number of customizations held.
func (s *Store) Customizations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byName)
}

func (s *Store) rebuild(log logr.Logger) {
	all := make([]*configv1alpha1.ResourceInterpreterCustomization, 0, len(s.byName))
	for _, c := range s.byName {
		all = append(all, c)
	}
	kinds, conflicts, errs := luarules.Merge(all)
	for _, err := range errs {
		log.Error(err, "Ignoring customization")
	}
	for _, c := range conflicts {
		log.Info("Customizations define the same rule", "conflict", c.String())
	}
	s.set.Store(luarules.NewSet(LayerName, s.vm, kinds))
	log.V(2).Info("Customizations updated", "customizations", len(all), "kinds", len(kinds))
}

// Informers gives informers by object type; a controller-runtime cache
// does.
type Informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// Watch keeps the store in step with the customizations in the informer
// cache (a controller-runtime cache, or anything giving informers). The
// store reports HasSynced once the cache's initial list has been applied.
func (s *Store) Watch(ctx context.Context, informers Informers) error {
	inf, err := informers.GetInformer(ctx, &configv1alpha1.ResourceInterpreterCustomization{})
	if err != nil {
		return err
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.applyObject(ctx, obj) },
		UpdateFunc: func(_, obj any) { s.applyObject(ctx, obj) },
		DeleteFunc: func(obj any) { s.deleteObject(ctx, obj) },
	})
	if err != nil {
		return err
	}
	s.reg.Store(&reg)
	return nil
}

func (s *Store) applyObject(ctx context.Context, obj any) {
	if c, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization); ok {
		s.Apply(ctx, c)
	}
}

func (s *Store) deleteObject(ctx context.Context, obj any) {
	switch o := obj.(type) {
	case *configv1alpha1.ResourceInterpreterCustomization:
		s.Delete(ctx, o.Name)
	case toolscache.DeletedFinalStateUnknown:
		if c, ok := o.Obj.(*configv1alpha1.ResourceInterpreterCustomization); ok {
			s.Delete(ctx, c.Name)
		}
	}
}

// HasSynced tells whether the watched cache's initial list is in; a store
// that watches nothing is always synced.
func (s *Store) HasSynced() bool {
	reg := s.reg.Load()
	return reg == nil || (*reg).HasSynced()
}

// Name implements interpreter.Layer.
func (s *Store) Name() string { return LayerName }

// Snapshot returns the current rules.
func (s *Store) Snapshot() *luarules.Set { return s.set.Load() }

// HookEnabled implements interpreter.Layer.
func (s *Store) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return s.set.Load().HookEnabled(gvk, op)
}

// GetReplicas implements interpreter.Layer.
func (s *Store) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, bool, error) {
	return s.set.Load().GetReplicas(ctx, obj)
}

// GetComponents implements interpreter.Layer.
func (s *Store) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]workv1alpha2.Component, bool, error) {
	return s.set.Load().GetComponents(ctx, obj)
}

// ReviseReplica implements interpreter.Layer.
func (s *Store) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, bool, error) {
	return s.set.Load().ReviseReplica(ctx, obj, replicas)
}

// Retain implements interpreter.Layer.
func (s *Store) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	return s.set.Load().Retain(ctx, desired, observed)
}

// AggregateStatus implements interpreter.Layer.
func (s *Store) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, bool, error) {
	return s.set.Load().AggregateStatus(ctx, obj, items)
}

// ReflectStatus implements interpreter.Layer.
func (s *Store) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, bool, error) {
	return s.set.Load().ReflectStatus(ctx, obj)
}

// InterpretHealth implements interpreter.Layer.
func (s *Store) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, bool, error) {
	return s.set.Load().InterpretHealth(ctx, obj)
}

// GetDependencies implements interpreter.Layer.
func (s *Store) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, bool, error) {
	return s.set.Load().GetDependencies(ctx, obj)
}
