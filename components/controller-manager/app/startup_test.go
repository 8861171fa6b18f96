package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/controllertest"
)

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

// TestWaitsForKarmadasKinds starts the controller-manager against an API
// server that does not serve Karmada's kinds yet: it waits, saying so, alive
// and not ready; once the CRDs are installed it starts and its controllers
// work.
func TestWaitsForKarmadasKinds(t *testing.T) {
	root := filepath.Join("..", "..", "..")
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
	opts, err := ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address="+addr)
	if err != nil {
		t.Fatal(err)
	}
	// Other tests of the package run the controllers in this process too.
	opts.Restartable = true
	logs := &logLines{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, opts, logs.logger()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	poll := func(what string, cond func(ctx context.Context) (bool, error)) {
		t.Helper()
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, controllertest.Eventually, true, func(ctx context.Context) (bool, error) {
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
	c, err := client.New(cfg, client.Options{Scheme: controllertest.Scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "late"},
		Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"},
	}
	if err := c.Create(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	poll("the cluster controller takes the Cluster", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
			return false, err
		}
		return slices.Contains(cluster.Finalizers, clusterv1alpha1.ClusterControllerFinalizer), nil
	})
	if !logs.contains("The API server serves the kinds needed; starting") {
		t.Error("no log line says it started")
	}
}
