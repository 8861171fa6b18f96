package localfed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run /bin/sh, not Kubernetes: they check how processes are
// started, stopped and reported, quickly.

func startShell(t *testing.T, s *supervisor, component, script string) *process {
	t.Helper()
	p, err := s.start(t.Context(), processSpec{
		cluster: "test", component: component, binary: "/bin/sh", args: []string{"-c", script}, tier: tierClient,
	})
	if err != nil {
		t.Fatalf("starting %s: %v", component, err)
	}
	return p
}

func TestStopAllKillsWhatIgnoresSIGTERM(t *testing.T) {
	s := newSupervisor(t.TempDir())
	polite := startShell(t, s, "polite", "exec sleep 100")
	// The shell ignores SIGTERM and leaves a grandchild in its process group,
	// which must go too.
	pidFile := filepath.Join(t.TempDir(), "grandchild")
	stubborn := startShell(t, s, "stubborn", `trap "" TERM; sleep 100 & echo $! > `+pidFile+`; wait`)
	var grandchild int
	err := waitFor(t.Context(), "grandchild pid", func(context.Context) (bool, error) {
		data, err := os.ReadFile(pidFile)
		if err != nil {
			return false, nil
		}
		grandchild, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil, nil
	}, stubborn)
	if err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	if err := s.stopAll(300 * time.Millisecond); err != nil {
		t.Errorf("stopAll reported %v, want nothing: no process died before", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("stopAll took %s", took)
	}
	for _, p := range []*process{polite, stubborn} {
		if !p.hasExited() {
			t.Errorf("%s not reaped", p)
		}
	}
	// SIGKILL is delivered at once, but dying takes the kernel a moment.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err = waitFor(ctx, "grandchild gone", func(context.Context) (bool, error) { return dead(grandchild), nil })
	if err != nil {
		t.Errorf("grandchild %d still runs: %v", grandchild, err)
	}
}

// dead reports whether pid is gone or a zombie: a killed orphan waits for
// init to reap it, which this test does not control.
func dead(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(after, "Z")
}

func TestStopAllReportsProcessesThatDiedBefore(t *testing.T) {
	s := newSupervisor(t.TempDir())
	startShell(t, s, "crasher", "exit 3")
	startShell(t, s, "sleeper", "exec sleep 100")
	time.Sleep(200 * time.Millisecond)
	err := s.stopAll(time.Second)
	if err == nil || !strings.Contains(err.Error(), "test/crasher exited (exit status 3)") {
		t.Errorf("stopAll = %v, want the crasher reported", err)
	}
	if err != nil && strings.Contains(err.Error(), "sleeper") {
		t.Errorf("stopAll = %v, want the sleeper, stopped by it, not reported", err)
	}
}

func TestRetryPortRaceRetriesOnlyExits(t *testing.T) {
	s := newSupervisor(t.TempDir())
	t.Cleanup(func() { _ = s.stopAll(time.Second) })
	attempts := 0
	err := retryPortRace(t.Context(), "crasher", func() error {
		attempts++
		p := startShell(t, s, "crasher", "exit 1")
		return waitFor(t.Context(), "crasher", func(context.Context) (bool, error) { return false, nil }, p)
	})
	if !errors.Is(err, errExited) || attempts != portRaceAttempts {
		t.Errorf("after %d attempts: %v; want %d attempts and errExited", attempts, err, portRaceAttempts)
	}

	attempts = 0
	other := errors.New("not an exit")
	err = retryPortRace(t.Context(), "other", func() error { attempts++; return other })
	if !errors.Is(err, other) || attempts != 1 {
		t.Errorf("after %d attempts: %v; want 1 attempt and the error itself", attempts, err)
	}
}

func TestLogsGoToClusterComponentFile(t *testing.T) {
	dir := t.TempDir()
	s := newSupervisor(dir)
	p := startShell(t, s, "talker", "echo hello; echo oops >&2")
	<-p.exited
	if err := s.stopAll(time.Second); err == nil {
		t.Error("stopAll reported nothing, want the talker's exit")
	}
	data, err := os.ReadFile(filepath.Join(dir, "test", "talker.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "hello\noops\n") {
		t.Errorf("log = %q, want stdout and stderr", data)
	}
}

func TestStartAfterStopAllFails(t *testing.T) {
	s := newSupervisor(t.TempDir())
	_ = s.stopAll(time.Second)
	_, err := s.start(t.Context(), processSpec{cluster: "test", component: "late", binary: "/bin/true"})
	if !errors.Is(err, errSpawnerStopped) {
		t.Errorf("start after stopAll = %v, want errSpawnerStopped", err)
	}
}

func TestStopClusterStopsOnlyThatCluster(t *testing.T) {
	s := newSupervisor(t.TempDir())
	start := func(cluster string, tier tier) *process {
		t.Helper()
		p, err := s.start(t.Context(), processSpec{
			cluster: cluster, component: "sleeper", binary: "/bin/sh", args: []string{"-c", "exec sleep 100"}, tier: tier,
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	goingServer, goingClient := start("going", tierAPIServer), start("going", tierClient)
	staying := start("staying", tierClient)

	if err := s.stopCluster("going", time.Second); err != nil {
		t.Errorf("stopCluster = %v, want nothing reported", err)
	}
	for _, p := range []*process{goingServer, goingClient} {
		if !p.hasExited() {
			t.Errorf("%s still runs", p)
		}
	}
	if staying.hasExited() {
		t.Errorf("%s of another cluster was stopped", staying)
	}
	again := start("going", tierClient)
	if got := len(s.pids()); got != 4 {
		t.Errorf("pids = %d, want every process started, 4", got)
	}
	// Processes stopped on purpose are not reported as having died.
	if err := s.stopAll(time.Second); err != nil {
		t.Errorf("stopAll = %v, want nothing reported", err)
	}
	for _, p := range []*process{staying, again} {
		if !p.hasExited() {
			t.Errorf("%s still runs after stopAll", p)
		}
	}
}
