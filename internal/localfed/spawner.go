package localfed

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
)

// errSpawnerStopped is returned when a process is started after Close.
var errSpawnerStopped = errors.New("localfed: federation is closed")

// spawner forks every child process from one goroutine locked to its OS thread.
//
// Linux delivers Pdeathsig when the thread that forked the child exits, not when
// the process does. Go may retire an ordinary thread at any time (a goroutine
// that exits while locked takes its thread with it), which would kill a child
// early; a thread we own for the whole federation cannot be retired under us.
type spawner struct {
	mu      sync.Mutex
	stopped bool
	reqs    chan spawnRequest
	done    chan struct{}
}

type spawnRequest struct {
	cmd    *exec.Cmd
	result chan<- error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnRequest), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *spawner) run() {
	// Never unlocked on purpose: when stop ends this goroutine the runtime ends
	// the thread too, and Pdeathsig then kills any child that is still alive.
	runtime.LockOSThread()
	defer close(s.done)
	for req := range s.reqs {
		req.result <- req.cmd.Start()
	}
}

// start runs cmd.Start on the spawner's thread.
func (s *spawner) start(cmd *exec.Cmd) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return errSpawnerStopped
	}
	result := make(chan error, 1)
	s.reqs <- spawnRequest{cmd: cmd, result: result}
	s.mu.Unlock()
	return <-result
}

// stop ends the spawner's thread; call it once every child has been reaped.
func (s *spawner) stop() {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.reqs)
	}
	s.mu.Unlock()
	<-s.done
}
