package lua

import (
	"sync"
	"sync/atomic"
)

// pool keeps up to size idle states. It never blocks: when it is empty a new
// state is made, and a state returned to a full pool is closed. Callers are
// controllers with their own worker limits, so concurrency is bounded there.
type pool struct {
	cfg    *config
	mu     sync.Mutex
	idle   []*state // LIFO: the most recently used state is the warmest
	closed bool

	// created and dropped count states, for tests and debugging.
	created, dropped atomic.Int64
}

func newPool(cfg *config) *pool {
	return &pool{cfg: cfg, idle: make([]*state, 0, cfg.poolSize)}
}

func (p *pool) get() (*state, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		st := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return st, nil
	}
	p.mu.Unlock()
	p.created.Add(1)
	return newState(p.cfg)
}

// drop closes a state that must not be reused.
func (p *pool) drop(st *state) {
	p.dropped.Add(1)
	st.close()
}

func (p *pool) put(st *state) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < p.cfg.poolSize {
		p.idle = append(p.idle, st)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	st.close()
}

func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, st := range idle {
		st.close()
	}
}
