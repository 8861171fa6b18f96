// Package servedkinds holds a component back until the API server serves the
// kinds it works on. A control plane comes up in any order — the operator,
// Helm or a person applying manifests may start the controller-manager and
// the scheduler before Karmada's CRDs are applied, or while they are not
// established yet — and a component started then would fail its informers
// and exit. Wait polls discovery instead, says what it waits for, and keeps
// the health probes answering (alive, not ready) meanwhile.
package servedkinds

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Defaults of Options.
const (
	DefaultInterval    = time.Second
	DefaultLogInterval = 30 * time.Second
)

// Options configures Wait.
type Options struct {
	// Kinds must all be served.
	Kinds []schema.GroupVersionKind
	// ProbeAddr, unless empty or "0", serves /healthz (ok) and /readyz
	// (503, naming the missing kinds) while Wait waits; the listener is
	// closed before Wait returns, for the component's own probes.
	ProbeAddr string
	// Interval between two looks at discovery; LogInterval between two log
	// lines while nothing changes.
	Interval, LogInterval time.Duration
}

// Wait returns once the API server at cfg serves every kind of
// opts.Kinds, or with ctx's error. Failures to reach the API server are
// waited out as well.
func Wait(ctx context.Context, cfg *rest.Config, opts Options, log logr.Logger) error {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.LogInterval <= 0 {
		opts.LogInterval = DefaultLogInterval
	}
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	missing, lookErr := Missing(client, opts.Kinds)
	if lookErr == nil && len(missing) == 0 {
		return nil
	}
	state := &probeState{}
	state.set(missing, lookErr)
	stop, err := serveProbes(opts.ProbeAddr, state)
	if err != nil {
		return err
	}
	defer stop()

	logged, lastLog := "", time.Time{}
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	for {
		if lookErr == nil && len(missing) == 0 {
			log.Info("The API server serves the kinds needed; starting")
			return nil
		}
		if now := describe(missing, lookErr); now != logged || time.Since(lastLog) >= opts.LogInterval {
			log.Info("Waiting for the API server to serve Karmada's kinds (CRDs not applied or not established yet); not ready until then",
				"missing", kindNames(missing), "error", errString(lookErr))
			logged, lastLog = now, time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		missing, lookErr = Missing(client, opts.Kinds)
		state.set(missing, lookErr)
	}
}

// Missing lists the kinds the API server does not serve. An error means
// discovery could not tell (the API server not answering).
func Missing(client discovery.DiscoveryInterface, kinds []schema.GroupVersionKind) ([]schema.GroupVersionKind, error) {
	var missing []schema.GroupVersionKind
	served := map[schema.GroupVersion][]string{}
	for _, gvk := range kinds {
		gv := gvk.GroupVersion()
		names, ok := served[gv]
		if !ok {
			list, err := client.ServerResourcesForGroupVersion(gv.String())
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return nil, fmt.Errorf("discovering %s: %w", gv, err)
			default:
				for _, r := range list.APIResources {
					if !strings.Contains(r.Name, "/") {
						names = append(names, r.Kind)
					}
				}
			}
			served[gv] = names
		}
		if !slices.Contains(names, gvk.Kind) {
			missing = append(missing, gvk)
		}
	}
	return missing, nil
}

func kindNames(kinds []schema.GroupVersionKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Kind + "." + k.GroupVersion().String()
	}
	return out
}

func describe(missing []schema.GroupVersionKind, err error) string {
	return strings.Join(kindNames(missing), ",") + "|" + errString(err)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// probeState is what /readyz reports while waiting.
type probeState struct {
	reason atomicString
}

func (s *probeState) set(missing []schema.GroupVersionKind, err error) {
	if err != nil {
		s.reason.Store("waiting for the API server: " + err.Error())
		return
	}
	s.reason.Store("waiting for the API server to serve " + strings.Join(kindNames(missing), ", "))
}

// serveProbes answers the health probes on addr until the returned stop is
// called; nothing when addr is empty or "0".
func serveProbes(addr string, state *probeState) (func(), error) {
	if addr == "" || addr == "0" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health probes on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, state.reason.Load(), http.StatusServiceUnavailable)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

// atomicString is a string read and written from several goroutines.
type atomicString struct{ v atomic.Value }

func (s *atomicString) Store(v string) { s.v.Store(v) }

func (s *atomicString) Load() string {
	v, _ := s.v.Load().(string)
	return v
}
