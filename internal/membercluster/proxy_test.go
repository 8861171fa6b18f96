package membercluster

import (
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// connectProxy is an HTTP proxy that tunnels CONNECT requests and records the
// headers each CONNECT carried.
type connectProxy struct {
	mu      sync.Mutex
	headers []http.Header
}

func (p *connectProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	p.mu.Lock()
	p.headers = append(p.headers, r.Header.Clone())
	p.mu.Unlock()
	upstream, err := net.Dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.WriteHeader(http.StatusOK)
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	go func() {
		defer func() { _ = upstream.Close() }()
		_, _ = io.Copy(upstream, buf)
	}()
	go func() {
		defer func() { _ = conn.Close() }()
		_, _ = io.Copy(conn, upstream)
	}()
}

func (p *connectProxy) seen() []http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]http.Header(nil), p.headers...)
}

// TestProxy reaches a TLS "member" through an HTTP CONNECT proxy with the
// Cluster's proxy headers, and checks the bearer token never reaches the
// proxy while the proxy header does.
func TestProxy(t *testing.T) {
	var gotAuth atomic.Value
	member := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`)
	}))
	defer member.Close()
	proxy := &connectProxy{}
	proxyServer := httptest.NewServer(proxy)
	defer proxyServer.Close()

	cluster := pushCluster(func(c *clusterv1alpha1.Cluster) {
		c.Spec.APIEndpoint = member.URL
		c.Spec.ProxyURL = proxyServer.URL
		c.Spec.ProxyHeader = map[string]string{"Proxy-Authorization": "Basic c2VjcmV0"}
	})
	secret := credentials(func(s *corev1.Secret) {
		s.Data[clusterv1alpha1.SecretCADataKey] = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: member.Certificate().Raw})
	})
	cfg, err := restConfig(cluster, secret, Options{})
	if err != nil {
		t.Fatal(err)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("ServerVersion through the proxy: %v", err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Errorf("gitVersion = %q", v.GitVersion)
	}
	if gotAuth.Load() != "Bearer tok" {
		t.Errorf("member saw Authorization %q, want the bearer token", gotAuth)
	}
	seen := proxy.seen()
	if len(seen) == 0 {
		t.Fatal("the request did not go through the proxy")
	}
	for _, h := range seen {
		if got := h.Get("Proxy-Authorization"); got != "Basic c2VjcmV0" {
			t.Errorf("CONNECT Proxy-Authorization = %q, want the Cluster's proxy header", got)
		}
		if h.Get("Authorization") != "" {
			t.Error("the bearer token leaked to the proxy")
		}
	}
}
