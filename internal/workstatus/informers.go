package workstatus

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/execution"
)

// watcher runs the member informers the Works need, each with the handler
// that turns member object events into Work reconciles, and stops those no
// Work needs. Its methods are serialized: deciding that an informer is
// unused and stopping it must not interleave with another Work asking for
// it.
type watcher struct {
	objects *execution.ManagedObjects
	events  *queueSource

	mu    sync.Mutex
	usage *usage
	// handled is the informer instance the handler was added to; a new
	// instance (the member's clients were rebuilt) needs it again.
	handled map[memberResource]cache.SharedIndexInformer
}

func newWatcher(objects *execution.ManagedObjects, events *queueSource) *watcher {
	return &watcher{objects: objects, events: events, usage: newUsage(), handled: map[memberResource]cache.SharedIndexInformer{}}
}

// watch records the resources of work in cluster and returns their running
// informers by resource.
func (w *watcher) watch(ctx context.Context, work types.NamespacedName, cluster string, gvrs []schema.GroupVersionResource) (map[schema.GroupVersionResource]cache.SharedIndexInformer, error) {
	resources := make([]memberResource, 0, len(gvrs))
	for _, gvr := range gvrs {
		resources = append(resources, memberResource{cluster: cluster, gvr: gvr})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop(w.usage.set(work, resources))

	out := make(map[schema.GroupVersionResource]cache.SharedIndexInformer, len(gvrs))
	for _, r := range resources {
		informer, err := w.objects.Informer(ctx, r.cluster, r.gvr)
		if err != nil {
			return nil, fmt.Errorf("starting informer of %s: %w", r.gvr, err)
		}
		if w.handled[r] != informer {
			if _, err := informer.AddEventHandler(w.handler()); err != nil {
				return nil, fmt.Errorf("watching %s: %w", r.gvr, err)
			}
			w.handled[r] = informer
		}
		out[r.gvr] = informer
	}
	return out, nil
}

// forget drops a Work that is gone, or no longer watched.
func (w *watcher) forget(work types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop(w.usage.forget(work))
}

func (w *watcher) stop(unused []memberResource) {
	for _, r := range unused {
		w.objects.Stop(r.cluster, r.gvr)
		delete(w.handled, r)
	}
}

// handler enqueues the Work a member object came from, as its annotations
// say.
func (w *watcher) handler() cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		annotations := m.GetAnnotations()
		ns, name := annotations[workv1alpha1.WorkNamespaceAnnotation], annotations[workv1alpha1.WorkNameAnnotation]
		if ns == "" || name == "" {
			return
		}
		w.events.add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj) },
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
}

// queueSource hands member object events to the controller's queue. It is
// a controller-runtime source that only keeps the queue it is started
// with; the informers it serves start later, from Reconcile.
type queueSource struct {
	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func (s *queueSource) start(_ context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = queue
	return nil
}

func (s *queueSource) add(req reconcile.Request) {
	s.mu.Lock()
	queue := s.queue
	s.mu.Unlock()
	if queue != nil {
		queue.Add(req)
	}
}
