package localfed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// tier orders shutdown: clients of an API server stop before it, and API
// servers before the etcd they store in, so nothing logs a storm of connection
// errors while going away.
type tier int

const (
	tierStorage tier = iota
	tierAPIServer
	tierClient
)

// processSpec describes one child process.
type processSpec struct {
	cluster   string // directory of its log: logs/<cluster>/
	component string // log file name: <component>.log
	binary    string
	args      []string
	// env is added to what the child inherits, which never has KUBECONFIG.
	env  []string
	tier tier
}

// process is a started child. exited is closed once it has been reaped.
type process struct {
	spec    processSpec
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error // valid after exited is closed
	// reported is set once the exit was returned as an error, as when a start
	// lost a port race and was retried.
	reported atomic.Bool
}

func (p *process) String() string { return p.spec.cluster + "/" + p.spec.component }

// pid is the child's process id, which is also its process group id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// hasExited reports whether the process has ended.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// exitError describes how the process ended and where its log is; call it only
// once hasExited. It marks the exit as reported, so that Close does not report
// it again.
func (p *process) exitError() error {
	p.reported.Store(true)
	how := "with status 0"
	if p.waitErr != nil {
		how = "(" + p.waitErr.Error() + ")"
	}
	return fmt.Errorf("%s exited %s; see %s", p, how, p.logPath)
}

// stop sends SIGTERM to the process group, SIGKILL after grace, and waits
// until the process is reaped. It returns the exit error of a process that had
// already died.
func (p *process) stop(grace time.Duration) (diedEarly error) {
	pgid := p.pid()
	if p.hasExited() {
		if !p.reported.Load() {
			diedEarly = p.exitError()
		}
	} else {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.exited
		}
	}
	// Whatever the leader left in its group goes too; ESRCH when nothing did.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return diedEarly
}

// supervisor starts child processes, keeps track of them and stops them, one
// cluster's or all.
type supervisor struct {
	logDir  string
	spawner *spawner

	mu sync.Mutex
	// procs are the processes not stopped yet. One stopped on purpose leaves
	// the list: its process group id may be reused once it is reaped, and a
	// later signal to it must not reach a stranger.
	procs []*process
	// started are the pids of every process ever started.
	started []int
	closing bool
}

func newSupervisor(logDir string) *supervisor {
	return &supervisor{logDir: logDir, spawner: newSpawner()}
}

// start launches spec with its output in logs/<cluster>/<component>.log. The
// process runs until stopAll, whatever happens to ctx, which only carries the
// logger.
func (s *supervisor) start(ctx context.Context, spec processSpec) (*process, error) {
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return nil, errSpawnerStopped
	}
	logPath := filepath.Join(s.logDir, spec.cluster, spec.component+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	// Appending keeps the output of an attempt that lost a port race.
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log file: %w", err)
	}
	defer func() { _ = logFile.Close() }() // the child holds its own descriptor
	_, _ = fmt.Fprintf(logFile, "# %s %s\n", spec.binary, strings.Join(spec.args, " "))

	cmd := exec.Command(spec.binary, spec.args...)
	cmd.Env = append(childEnv(), spec.env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = childSysProcAttr()
	if err := s.spawner.start(cmd); err != nil {
		return nil, fmt.Errorf("starting %s/%s: %w", spec.cluster, spec.component, err)
	}

	p := &process{spec: spec, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.started = append(s.started, p.pid())
	s.mu.Unlock()
	log.FromContext(ctx).V(1).Info("Started process", "process", p.String(), "pid", p.pid(), "log", logPath)
	return p, nil
}

// stopAll stops every process, tier by tier from the clients down to storage,
// the processes of a tier in parallel, then ends the spawner's thread. It
// reports the processes that had died before, which a test should know about.
func (s *supervisor) stopAll(grace time.Duration) error {
	s.mu.Lock()
	s.closing = true
	procs := slices.Clone(s.procs)
	s.mu.Unlock()
	err := stopInTiers(procs, grace)
	// Last, since ending the spawner's thread SIGKILLs through Pdeathsig any
	// child still alive, such as one whose start raced with this stop.
	s.spawner.stop()
	return err
}

// stopCluster stops the processes of one cluster, in tiers as stopAll does,
// and forgets them, so that the cluster can be started again. It reports the
// processes that had died before.
func (s *supervisor) stopCluster(cluster string, grace time.Duration) error {
	s.mu.Lock()
	var procs []*process
	s.procs = slices.DeleteFunc(s.procs, func(p *process) bool {
		if p.spec.cluster == cluster {
			procs = append(procs, p)
			return true
		}
		return false
	})
	s.mu.Unlock()
	return stopInTiers(procs, grace)
}

// stopInTiers stops procs tier by tier from the clients down to storage, the
// processes of a tier in parallel.
func stopInTiers(procs []*process, grace time.Duration) error {
	died := make([]error, len(procs))
	for t := tierClient; t >= tierStorage; t-- {
		var wg sync.WaitGroup
		for i, p := range procs {
			if p.spec.tier == t {
				wg.Go(func() { died[i] = p.stop(grace) })
			}
		}
		wg.Wait()
	}
	return errors.Join(died...)
}

// pids returns the process ids of every process started so far, stopped or
// not.
// running lists the processes started and not yet stopped.
func (s *supervisor) running() []Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Process, 0, len(s.procs))
	for _, p := range s.procs {
		if p.cmd != nil && p.cmd.Process != nil {
			out = append(out, Process{Cluster: p.spec.cluster, Component: p.spec.component, PID: p.cmd.Process.Pid})
		}
	}
	return out
}

func (s *supervisor) pids() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.started)
}

// childEnv is this process's environment without KUBECONFIG, so no child ever
// talks to the user's own cluster by accident.
func childEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=")
	})
}

// errExited is wrapped by readiness waits when the awaited process ended.
var errExited = errors.New("process exited")
