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
)

// localState is what `local up` records for `local down` and for a second
// `local up`, which must not start over a running one.
type localState struct {
	PID        int       `json:"pid"`
	Kubeconfig string    `json:"kubeconfig"`
	WorkDir    string    `json:"workDir"`
	Started    time.Time `json:"started"`
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

// processAlive reports whether pid runs flotillactl. The command line is
// checked where /proc has it, so that a recycled pid of an unrelated process
// is never signalled.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) || !procMounted()
	}
	return strings.Contains(string(cmdline), "flotillactl")
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/cmdline")
	return err == nil
}
