// Package testlog gives tests a logger that writes to their testing.T for
// as long as the test runs, and drops what comes later.
package testlog

import (
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// New returns a logger writing to t. Managers started by a test keep
// goroutines (event broadcasters, informers) that may log after the test
// returned, and testing.T panics on a Log after completion: those lines are
// dropped instead.
func New(t testing.TB) logr.Logger {
	var mu sync.Mutex
	done := false
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		done = true
	})
	return funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Log(prefix, args)
		}
	}, funcr.Options{Verbosity: 0})
}
