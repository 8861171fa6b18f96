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
