// Package localfedtest starts local federations for tests: one per test with
// Start, or one shared by a package's tests with Shared. Working directories
// are removed when the tests pass and kept, with their logs, when they fail.
package localfedtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/go-logr/logr/testr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/internal/localfed"
)

// Start starts a federation for one test and stops it when the test ends.
func Start(t testing.TB, opts localfed.Options) *localfed.Federation {
	t.Helper()
	ownWorkDir := opts.WorkDir == ""
	if ownWorkDir {
		dir, err := os.MkdirTemp("", "localfed-"+dirSafe(t.Name())+"-")
		if err != nil {
			t.Fatalf("creating work directory: %v", err)
		}
		opts.WorkDir = dir
	}
	ctx := log.IntoContext(t.Context(), testr.NewWithInterface(t, testr.Options{}))
	f, err := localfed.Start(ctx, opts)
	if err != nil {
		if ownWorkDir {
			removeIfNoLogs(opts.WorkDir)
		}
		t.Fatalf("starting local federation: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("stopping local federation: %v", err)
		}
		finish(t, f, ownWorkDir, t.Failed())
	})
	return f
}

// Shared is one federation for all the tests of a package, started by the
// first test that asks for it, so that a run of only benchmarks or unrelated
// tests starts none:
//
//	var fed = &localfedtest.Shared{Options: localfed.Options{Members: 2}}
//
//	func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }
//
//	func TestSomething(t *testing.T) { f := fed.Get(t); ... }
type Shared struct {
	Options localfed.Options
	// BeforeClose, if set, runs after the tests and before the federation
	// stops, to stop what the tests ran against it.
	BeforeClose func()

	once sync.Once
	fed  *localfed.Federation
	err  error
}

// Get returns the shared federation, starting it on first use, or fails t.
func (s *Shared) Get(t testing.TB) *localfed.Federation {
	t.Helper()
	s.once.Do(func() {
		opts := s.Options
		if opts.WorkDir == "" {
			if opts.WorkDir, s.err = os.MkdirTemp("", "localfed-shared-"); s.err != nil {
				return
			}
		}
		s.fed, s.err = localfed.Start(log.IntoContext(context.Background(), stderrLogger()), opts)
		if s.err != nil && s.Options.WorkDir == "" {
			removeIfNoLogs(opts.WorkDir)
		}
	})
	if s.err != nil {
		t.Fatalf("starting shared local federation: %v", s.err)
	}
	return s.fed
}

// Main runs the package's tests, then stops the shared federation if one was
// started. Use its result as the exit code.
func (s *Shared) Main(m *testing.M) int {
	code := m.Run()
	if s.fed == nil {
		return code
	}
	if s.BeforeClose != nil {
		s.BeforeClose()
	}
	if err := s.fed.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "localfedtest: stopping shared local federation: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	finish(nil, s.fed, s.Options.WorkDir == "", code != 0)
	return code
}

// finish removes a work directory this package made, or keeps it and says
// where the logs are when something failed.
func finish(t testing.TB, f *localfed.Federation, ownWorkDir, failed bool) {
	if failed {
		msg := fmt.Sprintf("local federation kept in %s; logs in %s", f.WorkDir, f.LogDir())
		if t != nil {
			t.Log(msg)
		} else {
			fmt.Fprintln(os.Stderr, "localfedtest: "+msg)
		}
		return
	}
	if ownWorkDir {
		_ = os.RemoveAll(f.WorkDir)
	}
}

// removeIfNoLogs removes a work directory in which no process was started,
// as when a binary is missing; one with logs stays, since the error of Start
// points at them.
func removeIfNoLogs(dir string) {
	if _, err := os.Stat(filepath.Join(dir, "logs")); errors.Is(err, fs.ErrNotExist) {
		_ = os.RemoveAll(dir)
	}
}

// stderrLogger logs to stderr under go test -v, and only errors otherwise;
// a shared federation outlives the test that started it, so it cannot log
// through that test.
func stderrLogger() logr.Logger {
	verbosity := -1
	if testing.Verbose() {
		verbosity = 0
	}
	return funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, "localfed:", prefix, args)
	}, funcr.Options{Verbosity: verbosity})
}

// dirSafe turns a test name, subtests' slashes included, into something to
// put in a directory name.
func dirSafe(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, name)
}
