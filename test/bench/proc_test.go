package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ, 100 on
// every architecture Linux runs Kubernetes on.
const userHZ = 100

// procStats reads a process's CPU time and memory from /proc.
type procStats struct {
	pid int
}

// usage is one reading of a process.
type usage struct {
	cpu time.Duration
	// peakRSS is VmHWM in bytes: the most resident memory since the process
	// started or since resetPeak.
	peakRSS int64
}

// read returns the process's CPU time (user + system) and peak RSS.
func (p procStats) read() (usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return usage{}, err
	}
	// The command name, in parentheses, may hold spaces: fields are counted
	// after its closing one, where state is field 3 of proc(5).
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return usage{}, fmt.Errorf("/proc/%d/stat: no command name", p.pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return usage{}, fmt.Errorf("/proc/%d/stat: %d fields", p.pid, len(fields))
	}
	var ticks int64
	for _, f := range []string{fields[utime], fields[stime]} {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return usage{}, fmt.Errorf("/proc/%d/stat: %w", p.pid, err)
		}
		ticks += n
	}
	u := usage{cpu: time.Duration(ticks) * time.Second / userHZ}

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return usage{}, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return usage{}, fmt.Errorf("/proc/%d/status VmHWM: %w", p.pid, err)
			}
			u.peakRSS = kb << 10
		}
	}
	return u, nil
}

// resetPeak sets VmHWM back to the current RSS (clear_refs, Linux 4.0 on),
// so that the next read gives the peak of what ran in between. It reports
// whether the kernel allowed it.
func (p procStats) resetPeak() bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.pid), []byte("5"), 0) == nil
}

// findControlPlaneAPIServer picks the control plane's kube-apiserver among
// the federation's processes by its etcd prefix.
func findControlPlaneAPIServer(pids []int) (procStats, error) {
	for _, pid := range pids {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if filepath.Base(args[0]) != "kube-apiserver" {
			continue
		}
		for _, a := range args {
			if a == "--etcd-prefix=/karmada-apiserver" {
				return procStats{pid: pid}, nil
			}
		}
	}
	return procStats{}, fmt.Errorf("no control-plane kube-apiserver among pids %v", pids)
}

// component is a Flotilla process started by the benchmark.
type component struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error // valid once exited is closed
	// pprofAddr serves /debug/pprof when -bench.profile-dir is set.
	pprofAddr string
	procStats
}

// startComponent runs binary with args against the kubeconfig's current
// context, logging to <logDir>/<name>.log, in cgroup unless it is nil.
func startComponent(name, binary string, args, env []string, kubeconfig, logDir string, cgroup *memoryCgroup) (*component, error) {
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	var pprofAddr string
	if profiling() {
		var err error
		if pprofAddr, err = freeLocalAddr(); err != nil {
			return nil, err
		}
		args = append(args, "--profiling-bind-address="+pprofAddr)
	}
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	if cgroup != nil {
		binary, args = cgroup.wrap(binary, args)
		env = append(env, cgroup.env()...)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+kubeconfig), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Killed with the test binary, whatever way it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &component{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{}), pprofAddr: pprofAddr, procStats: procStats{pid: cmd.Process.Pid}}
	go func() {
		c.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(c.exited)
	}()
	return c, nil
}

// exitErr is nil while the component runs.
func (c *component) exitErr() error {
	select {
	case <-c.exited:
		return fmt.Errorf("%s exited (%w); see %s", c.name, c.waitErr, c.logPath)
	default:
		return nil
	}
}

// stop sends SIGTERM, SIGKILL after 10s, and reports an exit that came before.
func (c *component) stop() error {
	if err := c.exitErr(); err != nil {
		return err
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	return nil
}
