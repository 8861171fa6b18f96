package controllertest

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TCPProxy forwards TCP connections to an API server. Stopping it closes
// the listener and every open connection, which whoever dials through it
// sees as the API server going away; restarting it on the same port brings
// the server back. TLS goes through untouched, and the local federation's
// serving certificates name 127.0.0.1, so the proxy's address is as good as
// the server's own.
type TCPProxy struct {
	// Addr is host:port of the proxy.
	Addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

// StartTCPProxy listens on a free port of 127.0.0.1 and forwards to target
// (host:port) until the test ends.
func StartTCPProxy(t *testing.T, target string) *TCPProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &TCPProxy{Addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.Stop)
	return p
}

func (p *TCPProxy) serve(ln net.Listener) {
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

func (p *TCPProxy) forward(conn net.Conn) {
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
func (p *TCPProxy) track(conns ...net.Conn) bool {
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

// Stop closes the listener and every connection.
func (p *TCPProxy) Stop() {
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

// Restart listens again on the same address.
func (p *TCPProxy) Restart(t *testing.T) {
	t.Helper()
	var ln net.Listener
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		var err error
		ln, err = net.Listen("tcp", p.Addr)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("listening again on %s: %v", p.Addr, err)
	}
	p.serve(ln)
}
