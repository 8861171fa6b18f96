package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// selfSigned writes a serving certificate for 127.0.0.1 with serial into
// dir as tls.crt and tls.key.
func selfSigned(t *testing.T, dir string, serial int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "karmada-webhook"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// Written aside and renamed, as a kubelet updates a mounted Secret.
	for name, data := range map[string][]byte{
		DefaultCertName: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		DefaultKeyName:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	} {
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// servedSerial is the serial of the certificate the server presents.
func servedSerial(addr string) (int64, error) {
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only reads the certificate
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(), nil
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // test probe
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestServing: probes, metrics, certificate reload and graceful shutdown of
// a webhook run as the binary runs it.
func TestServing(t *testing.T) {
	dir := t.TempDir()
	selfSigned(t, dir, 1)
	port, probe, metrics := freePort(t), freePort(t), freePort(t)
	opts, err := ParseOptions("--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--cert-dir="+dir,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probe), fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics),
		"--graceful-shutdown-timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, opts, logr.Discard()) }()

	probeURL := fmt.Sprintf("http://127.0.0.1:%d", probe)
	poll := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return cond(), nil
		}); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	poll("/readyz", func() bool { code, _, _ := get(probeURL + "/readyz"); return code == http.StatusOK })
	if code, _, err := get(probeURL + "/healthz"); err != nil || code != http.StatusOK {
		t.Errorf("/healthz: %d %v", code, err)
	}

	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if serial, err := servedSerial(addr); err != nil || serial != 1 {
		t.Fatalf("served certificate serial %d, %v; want 1", serial, err)
	}
	// Requests count in the metrics, per path.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	resp, err := client.Post("https://"+addr+"/validate-resourcedeletionprotection", "application/json",
		strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE"}}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	_, body, err := get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics))
	if err != nil || !strings.Contains(body, `controller_runtime_webhook_requests_total{code="200",webhook="/validate-resourcedeletionprotection"}`) {
		t.Errorf("metrics do not count the request (%v)", err)
	}

	// A new certificate in --cert-dir is served without a restart.
	selfSigned(t, dir, 2)
	poll("the new certificate", func() bool { serial, _ := servedSerial(addr); return serial == 2 })

	// The test's keep-alive connections would hold the servers' shutdown
	// open until they time out: close them, as a departing client does.
	client.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
	cancel()
	// Within the 5s grace period, with room for a loaded machine.
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v on shutdown", err)
		}
	case <-time.After(20 * time.Second):
		// What still runs says why.
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		t.Fatal("Run did not return within 20s of shutdown (grace period 5s)")
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("still listening after shutdown")
	}
}

// TestStopWhileStarting: a webhook stopped before its caches have synced
// (a pod deleted right after it started) still returns. The manager's
// runnables must not share Run's context: a readiness check cancelled
// with it never reports, and the manager would wait for it forever.
func TestStopWhileStarting(t *testing.T) {
	dir := t.TempDir()
	selfSigned(t, dir, 1)
	for i := range 3 {
		port, probe := freePort(t), freePort(t)
		opts, err := ParseOptions("--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port), "--cert-dir="+dir,
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probe), "--metrics-bind-address=0",
			"--graceful-shutdown-timeout=5s")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, cfg, opts, logr.Discard()) }()
		// /healthz answers as soon as the manager starts, before its
		// caches are filled.
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			code, _, _ := get(fmt.Sprintf("http://127.0.0.1:%d/healthz", probe))
			return code == http.StatusOK, nil
		}); err != nil {
			cancel()
			t.Fatalf("attempt %d: waiting for /healthz: %v", i, err)
		}
		cancel()
		select {
		case err := <-done:
			// Stopped mid-start, Run may report the runnables it did
			// not wait for; what matters is that it returned.
			if err != nil {
				t.Logf("attempt %d: Run returned %v", i, err)
			}
		case <-time.After(20 * time.Second):
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			t.Fatalf("attempt %d: Run did not return within 20s of a shutdown during start (grace period 5s)", i)
		}
	}
}
