package main

import (
	"testing"

	"github.com/flotilla-io/flotilla/internal/release"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("flotillactl %v: %v", args, err)
		}
		if want := release.Version + "\n"; out != want {
			t.Errorf("flotillactl %v printed %q, want %q", args, out, want)
		}
	}
}

func TestCommandName(t *testing.T) {
	for arg0, want := range map[string]string{
		"/usr/local/bin/flotillactl":   "flotillactl",
		"/home/u/bin/kubectl-flotilla": "kubectl flotilla",
		"./flotillactl.test":           "flotillactl",
		"kubectl-flotilla-other":       "flotillactl",
	} {
		if got := commandName(arg0); got != want {
			t.Errorf("commandName(%q) = %q, want %q", arg0, got, want)
		}
	}
}
