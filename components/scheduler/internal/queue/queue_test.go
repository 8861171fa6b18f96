package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func k(name string) Key { return Key{Namespace: "default", Name: name} }

func newTestQueue() (*Queue, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	return New(Options{InitialBackoff: time.Second, MaxBackoff: 8 * time.Second, UnschedulableTimeout: time.Minute, Clock: clk}), clk
}

// popNow pops without blocking; ok false when nothing is active.
func popNow(q *Queue) (Key, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	return q.Pop(ctx)
}

func drain(q *Queue) []string {
	var out []string
	for {
		key, ok := popNow(q)
		if !ok {
			return out
		}
		out = append(out, key.Name)
		q.Done(key, Done)
	}
}

func TestPriorityThenArrival(t *testing.T) {
	q, _ := newTestQueue()
	q.Add(k("low"), 0)
	q.Add(k("high"), 10)
	q.Add(k("low2"), 0)
	q.Add(k("mid"), 5)
	q.Add(k("low"), 0) // duplicate keeps its place
	q.Add(k("raised"), 0)
	q.Add(k("raised"), 20) // re-adding with a new priority reorders
	if diff := cmp.Diff([]string{"raised", "high", "mid", "low", "low2"}, drain(q)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestBackoffIsExponential(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(k("a"), 0)
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		key, ok := popNow(q)
		if !ok {
			t.Fatalf("nothing to pop before a %v backoff", wait)
		}
		q.Done(key, Failed)
		clk.Step(wait - time.Millisecond)
		q.flush()
		if _, ok := popNow(q); ok {
			t.Fatalf("popped before the %v backoff ended", wait)
		}
		clk.Step(time.Millisecond)
		q.flush()
	}
	key, _ := popNow(q)
	q.Done(key, Done) // success resets the backoff
	q.Add(k("a"), 0)
	key, _ = popNow(q)
	q.Done(key, Failed)
	clk.Step(time.Second)
	q.flush()
	if _, ok := popNow(q); !ok {
		t.Error("backoff not reset by success")
	}
}

func TestEventsDoNotDefeatBackoff(t *testing.T) {
	q, _ := newTestQueue()
	q.Add(k("a"), 0)
	key, _ := popNow(q)
	q.Done(key, Failed)
	q.Add(k("a"), 0)
	if _, ok := popNow(q); ok {
		t.Error("an event skipped the backoff")
	}
	if a, b, u := q.Len(); a != 0 || b != 1 || u != 0 {
		t.Errorf("Len = %d %d %d", a, b, u)
	}
}

func TestUnschedulable(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(k("a"), 0)
	key, _ := popNow(q)
	q.Done(key, Unschedulable)
	if !q.Unschedulable(k("a")) {
		t.Fatal("not in the unschedulable pool")
	}
	// A cluster event within the backoff parks it in backoff.
	q.MoveAllToActive()
	if _, ok := popNow(q); ok {
		t.Fatal("retried inside its backoff")
	}
	clk.Step(time.Second)
	q.flush()
	key, ok := popNow(q)
	if !ok {
		t.Fatal("not retried after a cluster event and its backoff")
	}
	q.Done(key, Unschedulable)

	// Without events it is retried after the timeout.
	clk.Step(59 * time.Second)
	q.flush()
	if _, ok := popNow(q); ok {
		t.Fatal("retried before the timeout")
	}
	clk.Step(time.Second)
	q.flush()
	if _, ok := popNow(q); !ok {
		t.Fatal("not retried after the timeout")
	}
}

func TestAddWhileProcessing(t *testing.T) {
	q, _ := newTestQueue()
	q.Add(k("a"), 0)
	key, _ := popNow(q)
	q.Add(k("a"), 3)
	if _, ok := popNow(q); ok {
		t.Fatal("a binding was handed out twice")
	}
	// Even a failure retries at once: the change may be what it needed.
	q.Done(key, Failed)
	if key, ok := popNow(q); !ok || key != k("a") {
		t.Fatal("the change made while processing was lost")
	}
}

func TestDelete(t *testing.T) {
	q, _ := newTestQueue()
	q.Add(k("a"), 0)
	q.Add(k("b"), 0)
	q.Delete(k("a"))
	key, _ := popNow(q)
	q.Done(key, Unschedulable)
	q.Delete(k("b"))
	q.MoveAllToActive()
	if a, b, u := q.Len(); a+b+u != 0 {
		t.Errorf("Len = %d %d %d after deleting everything", a, b, u)
	}
}

func TestConcurrentWorkers(t *testing.T) {
	q, _ := newTestQueue()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan Key, 100)
	for range 4 {
		go func() {
			for {
				key, ok := q.Pop(ctx)
				if !ok {
					return
				}
				seen <- key
				q.Done(key, Done)
			}
		}()
	}
	for i := range 100 {
		q.Add(Key{Name: string(rune('A' + i))}, int32(i%3))
	}
	got := map[Key]bool{}
	for range 100 {
		select {
		case key := <-seen:
			got[key] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of 100 processed", len(got))
		}
	}
	if len(got) != 100 {
		t.Errorf("%d distinct keys", len(got))
	}
}
