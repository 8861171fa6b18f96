// Package servedkindstest checks, for any component, the start-up that
// servedkinds.Wait gives it: against an API server without Flotilla's
// CRDs it waits, saying so, alive and not ready, and it starts once they
// are installed.
package servedkindstest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Run runs a component against cfg, serving its probes on probeAddr, until
// ctx is done.
type Run func(ctx context.Context, cfg *rest.Config, probeAddr string, logger logr.Logger) error

// Poll waits until cond holds, failing the test after a deadline or if the
// component's Run returned meanwhile.
type Poll func(what string, cond func(ctx context.Context) (bool, error))

// WaitsThenStarts starts an API server without Flotilla's CRDs and run
// against it, checks that it waits for Karmada's kinds as described, then
// installs the CRDs and waits until it is ready and says it started. It
// returns the API server's config and a Poll for the component's own
// checks; the component and the API server stop when the test ends.
func WaitsThenStarts(t *testing.T, run Run) (*rest.Config, Poll) {
	t.Helper()
	root := repoRoot(t)
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Setenv("KUBEBUILDER_ASSETS", filepath.Join(root, "bin", "k8s", "v1.37.2"))
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	addr := freeAddr(t)
	logs := &logLines{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, addr, logs.logger()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	poll := func(what string, cond func(ctx context.Context) (bool, error)) {
		t.Helper()
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			select {
			case err := <-done:
				done <- err
				return false, fmt.Errorf("Run returned while waiting until %s: %w", what, err)
			default:
			}
			ok, err := cond(ctx)
			return ok && err == nil, nil
		})
		if err != nil {
			t.Fatalf("waiting until %s: %v", what, err)
		}
	}
	poll("it says it waits for Karmada's kinds", func(context.Context) (bool, error) {
		return logs.contains("Waiting for the API server to serve Karmada's kinds"), nil
	})
	poll("it is alive and not ready", func(ctx context.Context) (bool, error) {
		live, err := probe(ctx, "http://"+addr+"/healthz")
		if err != nil {
			return false, err
		}
		ready, err := probe(ctx, "http://"+addr+"/readyz")
		return live == http.StatusOK && ready == http.StatusServiceUnavailable, err
	})

	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{filepath.Join(root, "config", "crd", "bases")}}); err != nil {
		t.Fatal(err)
	}
	poll("it is ready", func(ctx context.Context) (bool, error) {
		ready, err := probe(ctx, "http://"+addr+"/readyz")
		return ready == http.StatusOK, err
	})
	if !logs.contains("The API server serves the kinds needed; starting") {
		t.Error("no log line says it started")
	}
	return cfg, poll
}

// repoRoot is found from this file's location, whichever package calls.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("locating the repository root")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// logLines records what a logger wrote.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{})
}

func (l *logLines) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.lines, func(line string) bool { return strings.Contains(line, s) })
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func probe(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
