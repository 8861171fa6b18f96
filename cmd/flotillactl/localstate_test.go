package main

import (
	"os"
	"os/exec"
	"testing"
)

func TestProcessAlive(t *testing.T) {
	self, err := procStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self == 0 {
		t.Skip("no /proc: the start time cannot be checked")
	}
	// A process that has exited, and whose pid nothing uses yet.
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		st   localState
		want bool
	}{
		{name: "this process", st: localState{PID: os.Getpid(), ProcStart: self}, want: true},
		{name: "this pid, started at another time (recycled)", st: localState{PID: os.Getpid(), ProcStart: self + 1}},
		{name: "exited", st: localState{PID: done.Process.Pid, ProcStart: self}},
		{name: "no pid", st: localState{}},
		// Test binaries are called flotillactl.test: an older state without
		// a start time is matched by the command line.
		{name: "older state, flotilla on the command line", st: localState{PID: os.Getpid()}, want: true},
	}
	for _, tt := range tests {
		if got := processAlive(tt.st); got != tt.want {
			t.Errorf("%s: processAlive = %v, want %v", tt.name, got, tt.want)
		}
	}
}
