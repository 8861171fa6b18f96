package cluster_test

import (
	"context"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cluster"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// One federation with one member for the package.
var fed = &localfedtest.Shared{Options: localfed.Options{
	Members:      1,
	Nodes:        localfed.NodeOptions{Count: 1},
	StartTimeout: 5 * time.Minute,
}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// env is what a test needs: the federation, a control-plane client that
// knows Works, and a running cluster controller.
type env struct {
	fed    *localfed.Federation
	client client.Client
}

// start runs the cluster controller in its own manager until the test ends.
func start(t *testing.T, health cluster.HealthOptions) *env {
	t.Helper()
	f := fed.Get(t)
	e := controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		return (&cluster.Reconciler{
			Client:    mgr.GetClient(),
			APIReader: mgr.GetAPIReader(),
			Recorder:  mgr.GetEventRecorder(cluster.ControllerName),
			Members:   e.Members,
			Informers: e.Informers,
			Health:    health,
		}).SetupWithManager(mgr)
	})
	return &env{fed: f, client: e.Client}
}

func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	controllertest.WaitFor(t, what, cond)
}

func hasEvent(ctx context.Context, c client.Client, name, reason string) (bool, error) {
	return controllertest.HasEvent(ctx, c, name, reason)
}

// tcpProxy forwards TCP connections to a member's API server. Stopping it
// closes the listener and every open connection, which the control plane sees
// as the member's API server going away; starting it again on the same port
// brings the member back. TLS goes through untouched, and the member's
// serving certificate names 127.0.0.1, so the proxy's address is as good as
// the member's own.
type tcpProxy struct {
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.stop)
	return p
}

func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(conn)
		}
	}()
}

func (p *tcpProxy) forward(conn net.Conn) {
	upstream, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = conn.Close()
		return
	}
	if !p.track(conn, upstream) {
		return
	}
	go func() { _, _ = io.Copy(upstream, conn); _ = upstream.Close() }()
	_, _ = io.Copy(conn, upstream)
	_ = conn.Close()
}

// track registers a connection pair, or closes it if the proxy has stopped.
func (p *tcpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *tcpProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func (p *tcpProxy) restart(t *testing.T) {
	t.Helper()
	var ln net.Listener
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		var err error
		ln, err = net.Listen("tcp", p.addr)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("listening again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}
