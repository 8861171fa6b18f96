package detector

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// claimIndex indexes templates by the permanent id of the policy claiming
// them, "pp/<id>" or "cpp/<id>", so a changed or deleted policy finds what
// it claimed.
const claimIndex = "claim"

func ppClaimIndexValue(id string) string  { return "pp/" + id }
func cppClaimIndexValue(id string) string { return "cpp/" + id }

func claimIndexFunc(obj any) ([]string, error) {
	c, ok := cachedTemplateOf(obj)
	if !ok {
		return nil, nil
	}
	var out []string
	if id := c.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]; id != "" {
		out = append(out, ppClaimIndexValue(id))
	}
	if id := c.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]; id != "" {
		out = append(out, cppClaimIndexValue(id))
	}
	return out, nil
}

// templateInformer is the running informer of one resource type.
type templateInformer struct {
	resourceType
	informer toolscache.SharedIndexInformer
	cancel   context.CancelFunc
	done     chan struct{}
}

// templateInformers are the running informers by type. Safe for concurrent
// use.
type templateInformers struct {
	mu    sync.RWMutex
	byGVR map[schema.GroupVersionResource]*templateInformer
	byGVK map[schema.GroupVersionKind]*templateInformer
}

func newTemplateInformers() *templateInformers {
	return &templateInformers{byGVR: map[schema.GroupVersionResource]*templateInformer{}, byGVK: map[schema.GroupVersionKind]*templateInformer{}}
}

func (t *templateInformers) get(gvr schema.GroupVersionResource) *templateInformer {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.byGVR[gvr]
}

func (t *templateInformers) forKind(gvk schema.GroupVersionKind) *templateInformer {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.byGVK[gvk]
}

func (t *templateInformers) all() []*templateInformer {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]*templateInformer, 0, len(t.byGVR))
	for _, ti := range t.byGVR {
		out = append(out, ti)
	}
	return out
}

// sync runs informers for exactly the wanted resources: it starts the
// missing ones with start and stops the others, except those of group
// versions whose discovery failed (keep), which are left as they are. It
// returns the resources started and stopped.
func (t *templateInformers) sync(want []resourceType, keep map[schema.GroupVersion]bool, start func(resourceType) *templateInformer) (started, stopped []resourceType) {
	wanted := make(map[schema.GroupVersionResource]resourceType, len(want))
	for _, r := range want {
		wanted[r.GVR] = r
	}
	var ended []*templateInformer
	t.mu.Lock()
	for gvr, ti := range t.byGVR {
		if _, ok := wanted[gvr]; ok || keep[gvr.GroupVersion()] {
			continue
		}
		ti.cancel()
		ended = append(ended, ti)
		stopped = append(stopped, ti.resourceType)
		delete(t.byGVR, gvr)
	}
	for gvr, r := range wanted {
		if _, ok := t.byGVR[gvr]; ok {
			continue
		}
		t.byGVR[gvr] = start(r)
		started = append(started, r)
	}
	t.byGVK = make(map[schema.GroupVersionKind]*templateInformer, len(t.byGVR))
	for _, ti := range t.byGVR {
		t.byGVK[ti.GVK()] = ti
	}
	t.mu.Unlock()
	for _, ti := range ended {
		<-ti.done
	}
	return started, stopped
}

// stopAll stops every informer and waits for them to end.
func (t *templateInformers) stopAll() {
	t.mu.Lock()
	all := make([]*templateInformer, 0, len(t.byGVR))
	for gvr, ti := range t.byGVR {
		ti.cancel()
		all = append(all, ti)
		delete(t.byGVR, gvr)
	}
	t.byGVK = map[schema.GroupVersionKind]*templateInformer{}
	t.mu.Unlock()
	for _, ti := range all {
		<-ti.done
	}
}

// startInformer starts the informer of one resource type, feeding the
// queue, until ctx ends or it is stopped.
func (d *Detector) startInformer(ctx context.Context, r resourceType) *templateInformer {
	informer := dynamicinformer.NewFilteredDynamicInformer(d.dynamic, r.GVR, metav1.NamespaceAll, d.opts.ResyncPeriod, toolscache.Indexers{
		toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc,
		claimIndex:                claimIndexFunc,
	}, nil).Informer()
	// Neither fails before the informer runs.
	_ = informer.SetTransform(d.filter.compact)
	_, _ = informer.AddEventHandler(d.templateHandler(r.GVR))
	runCtx, cancel := context.WithCancel(ctx)
	ti := &templateInformer{resourceType: r, informer: informer, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ti.done)
		informer.RunWithContext(runCtx)
	}()
	return ti
}

// templateHandler queues the templates of one type as they change. Status
// updates are ignored (specChanged); resyncs queue without marking a change.
func (d *Detector) templateHandler(gvr schema.GroupVersionResource) toolscache.ResourceEventHandler {
	enqueue := func(obj any, changed bool) {
		c, ok := cachedTemplateOf(obj)
		if !ok || c.ignored {
			return
		}
		k := keyOf(gvr, c)
		if changed {
			d.changes.mark(k)
		}
		d.queue.Add(k)
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { enqueue(obj, true) },
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := cachedTemplateOf(oldObj)
			n, ok2 := cachedTemplateOf(newObj)
			if !ok1 || !ok2 {
				return
			}
			if o.ResourceVersion == n.ResourceVersion {
				enqueue(n, false) // a resync
				return
			}
			if o.digest != n.digest {
				enqueue(n, true)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			// The binding goes with the template through its owner
			// reference; there is nothing to do but forget.
			if c, ok := cachedTemplateOf(obj); ok {
				d.changes.forget(keyOf(gvr, c))
			}
		},
	}
}

// Template returns a resource template from the detector's caches, so that
// other controllers need not cache every template a second time. The object
// is shared with the cache and must not be modified; managed fields are
// stripped. known is false while the detector does not watch the kind or
// its informer has not synced yet, when a missing template means nothing.
func (d *Detector) Template(gvk schema.GroupVersionKind, namespace, name string) (obj *unstructured.Unstructured, known bool) {
	ti := d.informers.forKind(gvk)
	if ti == nil || !ti.informer.HasSynced() {
		return nil, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	item, exists, err := ti.informer.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return nil, err == nil
	}
	c, ok := cachedTemplateOf(item)
	if !ok {
		return nil, false
	}
	u, err := c.Unstructured()
	if err != nil {
		return nil, false
	}
	return u, true
}

// errNotCached: the detector does not watch the kind, or has not listed it
// yet; the caller reads the API server instead.
var errNotCached = errors.New("template kind not in the detector's caches")

// Get reads a resource template from the detector's caches into obj, an
// *unstructured.Unstructured naming the template's apiVersion and kind: the
// binding and binding-status controllers read templates through it
// (binding.TemplateReader's Cache) instead of asking the API server on
// every reconcile. A kind the detector does not watch yet fails with
// errNotCached, an absent template with NotFound. obj gets a copy, without
// managed fields.
func (d *Detector) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("detector caches hold unstructured templates, not %T", obj)
	}
	gvk := u.GroupVersionKind()
	cached, known := d.Template(gvk, key.Namespace, key.Name)
	switch {
	case !known:
		return errNotCached
	case cached == nil:
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	u.Object = cached.Object
	return nil
}
