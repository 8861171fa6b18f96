// Package queue is the scheduling queue of bindings, after kube-scheduler's:
// an active heap ordered by schedulePriority (then arrival), a backoff heap
// for bindings whose last attempt failed (exponential per binding), and an
// unschedulable pool for bindings nothing fits, retried when a cluster
// changes or after a while. A binding is never handed to two workers at
// once; an event arriving while it is being scheduled is kept and acted on
// when the worker is done.
package queue

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Key names a binding: a ResourceBinding by namespace and name, a
// ClusterResourceBinding by name with an empty namespace.
type Key struct {
	Namespace string
	Name      string
}

func (k Key) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// Outcome is how a scheduling attempt ended.
type Outcome int

// Outcomes.
const (
	// Done: scheduled, or nothing to do. Backoff is reset.
	Done Outcome = iota
	// Failed: an error (API conflict, internal error); retried after an
	// exponential backoff.
	Failed
	// Unschedulable: nothing fits; retried when a cluster changes or after
	// Options.UnschedulableTimeout.
	Unschedulable
)

// Options tunes the queue.
type Options struct {
	// InitialBackoff is the delay after the first failure; it doubles per
	// consecutive failure. Default 500ms.
	InitialBackoff time.Duration
	// MaxBackoff caps the delay. Default 30s.
	MaxBackoff time.Duration
	// UnschedulableTimeout is how long an unschedulable binding waits
	// without a cluster event before it is retried anyway. Default 60s.
	UnschedulableTimeout time.Duration
	// Clock is for tests; default the real clock.
	Clock clock.WithTicker
}

func (o *Options) defaults() {
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.UnschedulableTimeout <= 0 {
		o.UnschedulableTimeout = 60 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

type item struct {
	key      Key
	priority int32
	seq      uint64    // arrival order among equal priorities
	readyAt  time.Time // backoff: when it may run again
	since    time.Time // unschedulable: when it got there
	index    int
}

// Queue is safe for concurrent use.
type Queue struct {
	opts Options

	mu            sync.Mutex
	active        activeHeap
	backoff       backoffHeap
	where         map[Key]*item // items in active or backoff
	unschedulable map[Key]*item
	processing    map[Key]int32 // priority of the attempt
	dirty         map[Key]int32 // re-added while processing, with priority
	attempts      map[Key]int   // consecutive failures
	seq           uint64

	// wake carries one pending wake-up for a waiting Pop.
	wake chan struct{}
}

// New returns an empty queue.
func New(opts Options) *Queue {
	opts.defaults()
	return &Queue{
		opts:          opts,
		where:         make(map[Key]*item),
		unschedulable: make(map[Key]*item),
		processing:    make(map[Key]int32),
		dirty:         make(map[Key]int32),
		attempts:      make(map[Key]int),
		wake:          make(chan struct{}, 1),
	}
}

// Add asks for the binding to be scheduled. A binding waiting out a
// failure backoff keeps waiting (events must not defeat backoff), one in
// the unschedulable pool moves on, one being scheduled is re-queued when
// its worker is done.
func (q *Queue) Add(key Key, priority int32) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.processing[key]; ok {
		q.dirty[key] = priority
		return
	}
	if it, ok := q.where[key]; ok {
		it.priority = priority
		if it.index >= 0 && it.readyAt.IsZero() {
			heap.Fix(&q.active, it.index)
		}
		return
	}
	if it, ok := q.unschedulable[key]; ok {
		delete(q.unschedulable, key)
		it.priority = priority
		q.release(it)
		return
	}
	q.pushActive(&item{key: key, priority: priority})
}

// Pop blocks until a binding is ready or ctx ends (ok false). The caller
// must call Done with the key.
func (q *Queue) Pop(ctx context.Context) (Key, bool) {
	for {
		q.mu.Lock()
		if q.active.Len() > 0 {
			it := heap.Pop(&q.active).(*item)
			delete(q.where, it.key)
			q.processing[it.key] = it.priority
			more := q.active.Len() > 0
			q.mu.Unlock()
			if more {
				// Chain the wake-up so idle workers drain the heap too.
				q.signal()
			}
			return it.key, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return Key{}, false
		case <-q.wake:
		}
	}
}

// Done ends an attempt started by Pop.
func (q *Queue) Done(key Key, outcome Outcome) {
	q.mu.Lock()
	defer q.mu.Unlock()
	priority := q.processing[key]
	delete(q.processing, key)
	newPriority, dirty := q.dirty[key]
	delete(q.dirty, key)
	switch outcome {
	case Done:
		delete(q.attempts, key)
	case Failed, Unschedulable:
		q.attempts[key]++
	}
	if dirty {
		// Something changed while the attempt ran; the failure may be
		// stale (a conflict, a cluster that appeared), so retry now.
		q.pushActive(&item{key: key, priority: newPriority})
		return
	}
	now := q.opts.Clock.Now()
	switch outcome {
	case Failed:
		q.pushBackoff(&item{key: key, priority: priority, readyAt: now.Add(q.backoffFor(key))})
	case Unschedulable:
		q.unschedulable[key] = &item{key: key, priority: priority, since: now, readyAt: now.Add(q.backoffFor(key)), index: -1}
	}
}

// Delete forgets a binding (it was deleted or handed to another
// scheduler).
func (q *Queue) Delete(key Key) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if it, ok := q.where[key]; ok {
		delete(q.where, key)
		if it.readyAt.IsZero() {
			heap.Remove(&q.active, it.index)
		} else {
			heap.Remove(&q.backoff, it.index)
		}
	}
	delete(q.unschedulable, key)
	delete(q.dirty, key)
	delete(q.attempts, key)
}

// MoveAllToActive retries every unschedulable binding: a cluster changed,
// so something may fit now. Bindings still inside their backoff wait it
// out first, which keeps a stream of cluster updates from spinning them.
func (q *Queue) MoveAllToActive() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for key, it := range q.unschedulable {
		delete(q.unschedulable, key)
		q.release(it)
	}
}

// release moves a formerly unschedulable item to backoff or active.
func (q *Queue) release(it *item) {
	if q.opts.Clock.Now().Before(it.readyAt) {
		q.pushBackoff(&item{key: it.key, priority: it.priority, readyAt: it.readyAt})
		return
	}
	q.pushActive(&item{key: it.key, priority: it.priority})
}

// Run moves bindings whose backoff ended to active and retries those
// unschedulable for UnschedulableTimeout, until ctx ends.
func (q *Queue) Run(ctx context.Context) {
	tick := q.opts.Clock.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
			q.flush()
		}
	}
}

// flush does one round of Run's work.
func (q *Queue) flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Clock.Now()
	for q.backoff.Len() > 0 && !now.Before(q.backoff[0].readyAt) {
		it := heap.Pop(&q.backoff).(*item)
		delete(q.where, it.key)
		q.pushActive(&item{key: it.key, priority: it.priority})
	}
	for key, it := range q.unschedulable {
		if now.Sub(it.since) >= q.opts.UnschedulableTimeout {
			delete(q.unschedulable, key)
			q.pushActive(&item{key: key, priority: it.priority})
		}
	}
}

// Len returns the sizes of the active heap, the backoff heap and the
// unschedulable pool.
func (q *Queue) Len() (active, backoff, unschedulable int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.active.Len(), q.backoff.Len(), len(q.unschedulable)
}

// Unschedulable reports whether the binding is in the unschedulable pool.
func (q *Queue) Unschedulable(key Key) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.unschedulable[key]
	return ok
}

func (q *Queue) backoffFor(key Key) time.Duration {
	d := q.opts.InitialBackoff
	for i := 1; i < q.attempts[key]; i++ {
		d *= 2
		if d >= q.opts.MaxBackoff {
			return q.opts.MaxBackoff
		}
	}
	return min(d, q.opts.MaxBackoff)
}

// pushActive adds to the active heap unless the key is already queued or
// being processed. Callers hold mu.
func (q *Queue) pushActive(it *item) {
	if _, ok := q.where[it.key]; ok {
		return
	}
	if _, ok := q.processing[it.key]; ok {
		q.dirty[it.key] = it.priority
		return
	}
	q.seq++
	it.seq = q.seq
	it.readyAt = time.Time{}
	heap.Push(&q.active, it)
	q.where[it.key] = it
	q.signal()
}

func (q *Queue) pushBackoff(it *item) {
	if _, ok := q.where[it.key]; ok {
		return
	}
	heap.Push(&q.backoff, it)
	q.where[it.key] = it
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// activeHeap orders by priority (higher first), then arrival.
type activeHeap []*item

func (h activeHeap) Len() int { return len(h) }
func (h activeHeap) Less(i, j int) bool {
	if h[i].priority != h[j].priority {
		return h[i].priority > h[j].priority
	}
	return h[i].seq < h[j].seq
}
func (h activeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *activeHeap) Push(x any) {
	it := x.(*item)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *activeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	it.index = -1
	return it
}

// backoffHeap orders by readyAt.
type backoffHeap []*item

func (h backoffHeap) Len() int           { return len(h) }
func (h backoffHeap) Less(i, j int) bool { return h[i].readyAt.Before(h[j].readyAt) }
func (h backoffHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *backoffHeap) Push(x any) {
	it := x.(*item)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *backoffHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	it.index = -1
	return it
}
