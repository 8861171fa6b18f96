// Package certrotation keeps the agent's client certificate of the control
// plane fresh: when less than a fraction of its lifetime is left, the agent
// asks for a new one with a CSR signed in its own name (the approver checks
// certificatesigningrequests/selfclusteragent), and swaps it in without a
// restart. The connections made with the old certificate are closed, so
// that watches reconnect with the new one before the old one expires; the
// caches and the Works they hold are untouched. The new kubeconfig is also
// written to the member's Secret karmada-system/karmada-kubeconfig, when
// there is one, so that a restarted agent starts from it.
package certrotation

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/bootstrap"
)

// Defaults of karmada-agent's --cert-rotation-checking-interval and
// --cert-rotation-remaining-time-threshold.
const (
	DefaultCheckingInterval = 5 * time.Minute
	DefaultThreshold        = 0.2
)

// Credentials are a client certificate of the control plane that can be
// replaced while in use.
type Credentials struct {
	endpoint string
	ca       []byte
	dialer   *connrotation.Dialer

	current atomic.Pointer[tls.Certificate]
	mu      sync.Mutex
	pem     bootstrap.Certificate
	leaf    *x509.Certificate
	// lifetime is what to ask for: the validity of the certificate as it
	// was received, which a signer's backdating of NotBefore does not
	// stretch from one rotation to the next.
	lifetime time.Duration
}

// NewCredentials takes the client certificate out of cfg, which must
// authenticate with one (CertData/KeyData, or CertFile/KeyFile), and returns
// a copy of cfg that presents whatever certificate the Credentials hold.
// It returns nil Credentials, and cfg as is, when cfg uses no client
// certificate: there is then nothing to rotate.
func NewCredentials(cfg *rest.Config) (*Credentials, *rest.Config, error) {
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the control plane's TLS settings: %w", err)
	}
	loaded := rest.CopyConfig(cfg)
	if err := rest.LoadTLSFiles(loaded); err != nil {
		return nil, nil, fmt.Errorf("loading the control plane's certificate files: %w", err)
	}
	if len(loaded.CertData) == 0 || len(loaded.KeyData) == 0 || tlsCfg == nil {
		return nil, cfg, nil
	}
	c := &Credentials{endpoint: cfg.Host, ca: loaded.CAData}
	if err := c.set(bootstrap.Certificate{CertPEM: loaded.CertData, KeyPEM: loaded.KeyData}, time.Time{}); err != nil {
		return nil, nil, err
	}
	c.dialer = connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	tlsCfg.Certificates = nil
	tlsCfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return c.current.Load(), nil }
	out := rest.CopyConfig(cfg)
	// The transport below carries TLS; client-go refuses both.
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.BearerToken, out.BearerTokenFile, out.Username, out.Password = "", "", "", ""
	out.Transport = &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         c.dialer.DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
		ForceAttemptHTTP2:   true,
	}
	return c, out, nil
}

// set makes cert the one presented; received is when it was issued to us
// (zero when unknown: its lifetime is then NotAfter − NotBefore).
func (c *Credentials) set(cert bootstrap.Certificate, received time.Time) error {
	pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
	if err != nil {
		return fmt.Errorf("the agent's client certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Errorf("parsing the agent's client certificate: %w", err)
	}
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	if !received.IsZero() {
		lifetime = leaf.NotAfter.Sub(received)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pem, c.leaf, c.lifetime = cert, leaf, lifetime
	c.current.Store(&pair)
	return nil
}

// Leaf is the certificate presented now.
func (c *Credentials) Leaf() *x509.Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leaf
}

// Due reports whether a certificate valid from notBefore to notAfter has,
// at now, less than threshold of its lifetime left.
func Due(now, notBefore, notAfter time.Time, threshold float64) bool {
	total := notAfter.Sub(notBefore)
	if total <= 0 {
		return true
	}
	return float64(notAfter.Sub(now)) < threshold*float64(total)
}

// Rotator renews the Credentials. It is a controller-runtime Runnable.
type Rotator struct {
	ClusterName string
	Credentials *Credentials
	// ControlPlane is the rotating connection (Credentials' config).
	ControlPlane *rest.Config
	// Member, when set, receives the new kubeconfig in its Secret
	// <SecretNamespace>/karmada-kubeconfig, if it has one.
	Member client.Client
	// SecretNamespace holds that Secret (karmada-agent's
	// --karmada-kubeconfig-namespace). Default: karmada-system.
	SecretNamespace string
	Interval        time.Duration
	Threshold       float64
	// Timeout bounds the wait for a new certificate. Default: 2 minutes.
	Timeout time.Duration
}

// NeedLeaderElection: every agent rotates its own certificate.
func (r *Rotator) NeedLeaderElection() bool { return false }

// Start checks every Interval until ctx is done. A failed rotation is
// logged and tried on the next check: the old certificate is still valid.
func (r *Rotator) Start(ctx context.Context) error {
	if r.Credentials == nil || r.ControlPlane == nil || r.ClusterName == "" {
		return errors.New("certificate rotation: ClusterName, Credentials and ControlPlane are required")
	}
	if r.Interval <= 0 {
		r.Interval = DefaultCheckingInterval
	}
	if r.Threshold <= 0 {
		r.Threshold = DefaultThreshold
	}
	if r.Timeout <= 0 {
		r.Timeout = 2 * time.Minute
	}
	log := ctrl.LoggerFrom(ctx).WithName("cert-rotation")
	ctx = ctrl.LoggerInto(ctx, log)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := r.RotateIfDue(ctx, time.Now()); err != nil {
			log.Error(err, "Rotating the agent's certificate")
		}
	}, r.Interval)
	return nil
}

// RotateIfDue asks for a new certificate when the current one is due.
func (r *Rotator) RotateIfDue(ctx context.Context, now time.Time) error {
	leaf := r.Credentials.Leaf()
	if !Due(now, leaf.NotBefore, leaf.NotAfter, r.Threshold) {
		return nil
	}
	cs, err := kubernetes.NewForConfig(r.ControlPlane)
	if err != nil {
		return err
	}
	r.Credentials.mu.Lock()
	lifetime := r.Credentials.lifetime
	r.Credentials.mu.Unlock()
	requested := time.Now()
	cert, err := bootstrap.RequestAgentCertificate(ctx, cs, r.ClusterName, lifetime, r.Timeout)
	if err != nil {
		return err
	}
	if err := r.Credentials.set(cert, requested); err != nil {
		return err
	}
	// Connections authenticated with the old certificate go; watches and
	// requests reconnect with the new one.
	r.Credentials.dialer.CloseAll()
	newLeaf := r.Credentials.Leaf()
	ctrl.LoggerFrom(ctx).Info("Rotated the agent's certificate", "oldExpiry", leaf.NotAfter, "newExpiry", newLeaf.NotAfter)
	return r.persist(ctx, cert)
}

// persist writes the new kubeconfig into the member's agent Secret, if
// there is one (an agent installed by flotillactl register).
func (r *Rotator) persist(ctx context.Context, cert bootstrap.Certificate) error {
	if r.Member == nil {
		return nil
	}
	kubeconfig, err := bootstrap.AgentKubeconfig(r.Credentials.endpoint, r.Credentials.ca, cert)
	if err != nil {
		return err
	}
	var secret corev1.Secret
	ns := r.SecretNamespace
	if ns == "" {
		ns = bootstrap.AgentNamespace
	}
	key := client.ObjectKey{Namespace: ns, Name: bootstrap.AgentKubeconfigSecret}
	if err := r.Member.Get(ctx, key, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading the agent's Secret %s in the member: %w", key, err)
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Data[bootstrap.AgentKubeconfigKey] = kubeconfig
	if err := r.Member.Update(ctx, &secret); err != nil {
		return fmt.Errorf("writing the new kubeconfig to %s in the member: %w", key, err)
	}
	return nil
}
