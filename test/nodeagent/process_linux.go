package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// bindMount makes source visible at target inside a process's mount
// namespace, read-only.
type bindMount struct {
	source, target string
}

// launchSpec is one process to run.
type launchSpec struct {
	argv     []string // argv[0] is the binary's path
	env      []string
	dir      string
	output   *os.File // stdout and stderr
	hostname string
	binds    []bindMount
}

// process is a started process. done is closed once it has been reaped.
type process struct {
	pid   int
	done  chan struct{}
	state *os.ProcessState // valid once done is closed
}

// launch starts s in mount and UTS namespaces of its own, where the binds
// are mounted and the hostname is the pod's.
//
// The namespaces are made on a goroutine locked to a thread of its own:
// unshare(2) changes only the calling thread, so the mounts are done there,
// the child forked from there inherits them, and the host's namespace is
// never touched. That thread also waits for the child, and the goroutine
// ends without unlocking, so the Go runtime discards the thread once the
// child is gone. It keeps Pdeathsig meaningful too: Linux sends it when the
// thread that forked the child exits, which is then exactly when the child
// is done or this process dies. The alternative, unshare(1) and mount(8) in
// a shell before exec, would need those binaries and a shell script per
// container for the same result.
func launch(s launchSpec) (*process, error) {
	p := &process{done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := enterNamespaces(s); err != nil {
			started <- err
			return
		}
		cmd := &exec.Cmd{
			Path:   s.argv[0],
			Args:   s.argv,
			Env:    s.env,
			Dir:    s.dir,
			Stdout: s.output,
			Stderr: s.output,
			SysProcAttr: &syscall.SysProcAttr{
				// A group of its own, so that stopping it reaches whatever it
				// spawned.
				Setpgid:   true,
				Pdeathsig: syscall.SIGKILL,
			},
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		p.pid = cmd.Process.Pid
		started <- nil
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// enterNamespaces moves the calling thread into new mount and UTS
// namespaces, makes every mount private so that nothing done here reaches
// the host, and mounts s.binds.
func enterNamespaces(s launchSpec) error {
	if err := syscall.Unshare(syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS); err != nil {
		return fmt.Errorf("unshare: %w", err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if s.hostname != "" {
		if err := syscall.Sethostname([]byte(s.hostname)); err != nil {
			return fmt.Errorf("setting hostname: %w", err)
		}
	}
	for _, b := range s.binds {
		if err := syscall.Mount(b.source, b.target, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind-mounting %s on %s: %w", b.source, b.target, err)
		}
		if err := syscall.Mount("", b.target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", b.target, err)
		}
	}
	return nil
}

// signal sends sig to the process's group.
func (p *process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.pid, sig)
}

// stop sends SIGTERM, then SIGKILL after grace, and waits until the process
// is reaped. Whatever is left of its group is killed too.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.done:
	default:
		p.signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			p.signal(syscall.SIGKILL)
			<-p.done
		}
	}
	p.signal(syscall.SIGKILL)
}

// exitCode is the process's exit status, or 128 plus the signal that ended
// it, as container runtimes report it.
func (p *process) exitCode() int32 {
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(p.state.ExitCode())
}

// supported reports why this machine cannot run pods: the agent needs root
// to make mount namespaces.
var supported = sync.OnceValue(func() error {
	if os.Geteuid() != 0 {
		return errors.New("the node agent needs root to give each process a mount namespace")
	}
	result := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded
		result <- enterNamespaces(launchSpec{})
	}()
	if err := <-result; err != nil {
		return fmt.Errorf("the node agent cannot make mount namespaces: %w", err)
	}
	return nil
})
