package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// localState is what `local up` records for `local down` and for a second
// `local up`, which must not start over a running one.
type localState struct {
	PID        int       `json:"pid"`
	Kubeconfig string    `json:"kubeconfig"`
	WorkDir    string    `json:"workDir"`
	Started    time.Time `json:"started"`
	// ProcStart is when the process started, in the kernel's clock ticks
	// since boot (/proc/<pid>/stat): with the pid, it names the process
	// even after the pid is recycled. Zero where /proc is not mounted.
	ProcStart uint64 `json:"procStart,omitempty"`
}

const stateFile = "state.json"

// resolveStateDir defaults to $HOME/.flotilla/local.
func resolveStateDir(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state directory (set --state-dir): %w", err)
	}
	return filepath.Join(home, ".flotilla", "local"), nil
}

func readState(dir string) (localState, error) {
	var st localState
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return st, fmt.Errorf("reading local federation state: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("decoding %s: %w", filepath.Join(dir, stateFile), err)
	}
	return st, nil
}

func writeState(dir string, st localState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding local federation state: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	// Written whole, then renamed, so `local down` never reads half a file.
	tmp := filepath.Join(dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing local federation state: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, stateFile)); err != nil {
		return fmt.Errorf("writing local federation state: %w", err)
	}
	return nil
}

func removeState(dir string) error {
	if err := os.Remove(filepath.Join(dir, stateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing local federation state: %w", err)
	}
	return nil
}

// processAlive reports whether the process st recorded still runs. Where
// /proc has it, its start time must match, so that a recycled pid of an
// unrelated process is never signalled; a state without one (written by an
// older release) falls back to the command line, which names flotillactl
// or, run as a kubectl plugin, kubectl-flotilla.
func processAlive(st localState) bool {
	if st.PID <= 0 {
		return false
	}
	if err := syscall.Kill(st.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if !procMounted() {
		return true
	}
	if st.ProcStart != 0 {
		started, err := procStart(st.PID)
		return err == nil && started == st.ProcStart
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", st.PID))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	return strings.Contains(string(cmdline), "flotilla")
}

// procStart is the start time of pid from /proc; 0 without /proc.
func procStart(pid int) (uint64, error) {
	if !procMounted() {
		return 0, nil
	}
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	stat, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return stat.Starttime, nil
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/cmdline")
	return err == nil
}
