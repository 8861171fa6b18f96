package lua

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// tickPeriod is how often a running call looks at the clock, its caller's
// context and the heap. Short calls (tens of µs) never see a tick.
const tickPeriod = time.Millisecond

// heapMetric counts live heap objects plus garbage not yet swept: what a
// runaway script makes grow.
const heapMetric = "/memory/classes/heap/objects:bytes"

// guard is the context.Context given to a pooled LState. gopher-lua calls
// Done before every instruction, which makes it the one cheap hook into the
// interpreter loop: normally it returns a nil channel (never ready); once the
// call must stop it returns a closed channel and gopher-lua raises Err().
//
// A timer sets an atomic flag every tickPeriod while a call runs; the Lua
// goroutine then does the real checks. Instruction counting would not do:
// `s = s .. s` doubles memory every few instructions, so the checks must be
// driven by time.
type guard struct {
	timeout  time.Duration
	memLimit uint64

	// Set by begin, read by the Lua goroutine only.
	parent     context.Context
	parentDone <-chan struct{}
	start      time.Time
	deadline   time.Time
	reason     error
	baseline   uint64
	haveBase   bool
	sample     []metrics.Sample
	closed     chan struct{}

	tick   atomic.Bool
	active atomic.Bool
	timer  *time.Timer
}

func newGuard(timeout time.Duration, memLimit uint64) *guard {
	g := &guard{
		timeout:  timeout,
		memLimit: memLimit,
		sample:   []metrics.Sample{{Name: heapMetric}},
		closed:   make(chan struct{}),
	}
	close(g.closed)
	g.timer = time.AfterFunc(time.Hour, g.onTick)
	g.timer.Stop()
	return g
}

func (g *guard) onTick() {
	if !g.active.Load() {
		return
	}
	g.tick.Store(true)
	g.timer.Reset(tickPeriod)
}

// begin arms the guard for one call. It fails fast when ctx is already done.
func (g *guard) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.parent, g.parentDone = ctx, ctx.Done()
	g.reason, g.haveBase = nil, false
	g.start = time.Now()
	g.deadline = g.start.Add(g.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(g.deadline) {
		g.deadline = d
	}
	g.tick.Store(false)
	g.active.Store(true)
	g.timer.Reset(tickPeriod)
	return nil
}

// end disarms the guard and reports why the call was stopped, if it was.
func (g *guard) end() error {
	g.active.Store(false)
	g.timer.Stop()
	g.parent, g.parentDone = nil, nil
	return g.reason
}

func (g *guard) check() {
	if g.reason != nil {
		return
	}
	if now := time.Now(); !now.Before(g.deadline) {
		g.reason = timeoutError{after: g.deadline.Sub(g.start).Round(time.Millisecond)}
		return
	}
	select {
	case <-g.parentDone:
		g.reason = g.parent.Err()
		return
	default:
	}
	if g.memLimit == 0 {
		return
	}
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	heap := g.sample[0].Value.Uint64()
	// The baseline is the lowest heap seen during the call, taken from the
	// first tick on so that short calls never read the metric. A minimum,
	// because the heap at any one moment may hold garbage a later GC frees.
	if !g.haveBase || heap < g.baseline {
		g.baseline, g.haveBase = heap, true
		return
	}
	if heap-g.baseline > g.memLimit {
		g.reason = fmt.Errorf("%w: heap grew by %d MiB during the call (limit %d MiB)",
			ErrMemoryLimit, (heap-g.baseline)>>20, g.memLimit>>20)
	}
}

// Done implements context.Context; see the type comment.
func (g *guard) Done() <-chan struct{} {
	if g.tick.Load() {
		g.tick.Store(false)
		g.check()
	}
	if g.reason != nil {
		return g.closed
	}
	return nil
}

// Err implements context.Context.
func (g *guard) Err() error { return g.reason }

// Deadline implements context.Context.
func (g *guard) Deadline() (time.Time, bool) { return g.deadline, true }

// Value implements context.Context by asking the caller's context, so
// functions called from Lua can find the logger.
func (g *guard) Value(key any) any {
	if g.parent == nil {
		return nil
	}
	return g.parent.Value(key)
}

// stop closes the timer for good; the guard is not used afterwards.
func (g *guard) stop() {
	g.active.Store(false)
	g.timer.Stop()
}

// timeoutError matches both ErrTimeout and context.DeadlineExceeded, whichever
// deadline (the VM's or the caller's) was hit first.
type timeoutError struct{ after time.Duration }

func (e timeoutError) Error() string { return fmt.Sprintf("%v after %v", ErrTimeout, e.after) }

func (e timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}
