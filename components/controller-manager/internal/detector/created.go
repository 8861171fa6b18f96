package detector

import (
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createdTTL bounds how long a created binding is remembered: far longer
// than a watch event takes, so a binding the cache never shows (deleted at
// once) is forgotten rather than kept.
const createdTTL = time.Minute

// createdBindings remembers the bindings the detector created until its
// cache holds them. Claiming a template patches it, and that patch's watch
// event usually reconciles the template again before the binding's own
// event has reached the cache; without this the second pass would POST the
// binding again and GET it after the AlreadyExists, two wasted requests per
// template. A map of our own: client-go's expectations count objects, and
// the pass needs the object itself.
type createdBindings struct {
	mu      sync.Mutex
	now     func() time.Time
	objects map[client.ObjectKey]createdBinding
}

type createdBinding struct {
	obj client.Object
	at  time.Time
}

func newCreatedBindings() *createdBindings {
	return &createdBindings{now: time.Now, objects: map[client.ObjectKey]createdBinding{}}
}

// add remembers obj, as the API server returned it from the create.
func (c *createdBindings) add(key client.ObjectKey, obj client.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.objects[key] = createdBinding{obj: obj.DeepCopyObject().(client.Object), at: now}
	// Entries normally go when the cache shows them; sweep the ones it
	// never showed.
	for k, v := range c.objects {
		if now.Sub(v.at) > createdTTL {
			delete(c.objects, k)
		}
	}
}

// get returns a copy of the binding created at key, if it was created
// within createdTTL.
func (c *createdBindings) get(key client.ObjectKey) (client.Object, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.objects[key]
	if !ok {
		return nil, false
	}
	if c.now().Sub(v.at) > createdTTL {
		delete(c.objects, key)
		return nil, false
	}
	return v.obj.DeepCopyObject().(client.Object), true
}

// forget drops key: the cache holds it now, or a write based on the
// remembered copy failed.
func (c *createdBindings) forget(key client.ObjectKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects, key)
}

// len is the number of bindings remembered.
func (c *createdBindings) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.objects)
}
