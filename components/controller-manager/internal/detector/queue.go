package detector

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
)

// templateKey identifies a resource template on the work queue.
type templateKey struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

func keyOf(gvr schema.GroupVersionResource, obj metav1.Object) templateKey {
	return templateKey{GVR: gvr, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// storeKey is the key of the template in its informer's store.
func (k templateKey) storeKey() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

func (k templateKey) String() string {
	return k.GVR.String() + " " + k.storeKey()
}

// newQueue makes the template queue. Failures back off exponentially, but
// no longer than 30 s: most are waits for something that appears soon (a
// dependent override, an old binding garbage-collected).
func newQueue() workqueue.TypedRateLimitingInterface[templateKey] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[templateKey](5*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[templateKey]{Name: "resource-detector"},
	)
}

// changeTracker remembers which templates changed since they were last
// reconciled successfully. Policies with activationPreference Lazy apply
// to a claimed template only then: the queue key alone cannot say whether a
// template or a policy put it there.
type changeTracker struct {
	mu   sync.Mutex
	next uint64
	seq  map[templateKey]uint64
}

func newChangeTracker() *changeTracker {
	return &changeTracker{seq: map[templateKey]uint64{}}
}

// mark records a change of the template.
func (c *changeTracker) mark(k templateKey) {
	c.mu.Lock()
	c.next++
	c.seq[k] = c.next
	c.mu.Unlock()
}

// get tells whether the template changed, with a token for done.
func (c *changeTracker) get(k templateKey) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.seq[k]
	return s, ok
}

// done forgets the change seen as token, unless a newer one came meanwhile.
func (c *changeTracker) done(k templateKey, token uint64) {
	c.mu.Lock()
	if c.seq[k] == token {
		delete(c.seq, k)
	}
	c.mu.Unlock()
}

// forget drops the template, as when it is deleted.
func (c *changeTracker) forget(k templateKey) {
	c.mu.Lock()
	delete(c.seq, k)
	c.mu.Unlock()
}
