package membercluster

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Errors a caller may want to tell apart; they are wrapped with the cluster's
// name.
var (
	// ErrPullMode: the control plane never dials a Pull-mode member; its agent
	// does the talking.
	ErrPullMode = errors.New("cluster is in Pull mode")
	// ErrNoEndpoint: spec.apiEndpoint is empty.
	ErrNoEndpoint = errors.New("cluster has no spec.apiEndpoint")
	// ErrNoSecretRef: spec.secretRef is not set.
	ErrNoSecretRef = errors.New("cluster has no spec.secretRef")
	// ErrNoToken: the Secret has no token.
	ErrNoToken = errors.New("cluster secret has no " + clusterv1alpha1.SecretTokenKey)
)

// Defaults of Options.
const (
	// DefaultQPS and DefaultBurst match Karmada's --cluster-api-qps and
	// --cluster-api-burst.
	DefaultQPS   = 40
	DefaultBurst = 60
)

// Options tune the clients built for members.
type Options struct {
	// QPS and Burst bound the requests to each member. Default: DefaultQPS,
	// DefaultBurst.
	QPS   float32
	Burst int
	// UserAgent is sent to members. Default: client-go's.
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.QPS <= 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	return o
}

// restConfig builds the connection to a member from its Cluster and the
// credentials Secret. It does no I/O.
func restConfig(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret, opts Options) (*rest.Config, error) {
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		return nil, ErrPullMode
	}
	if cluster.Spec.APIEndpoint == "" {
		return nil, ErrNoEndpoint
	}
	token := secret.Data[clusterv1alpha1.SecretTokenKey]
	if len(token) == 0 {
		return nil, ErrNoToken
	}
	opts = opts.withDefaults()
	cfg := &rest.Config{
		Host:        cluster.Spec.APIEndpoint,
		BearerToken: string(token),
		QPS:         opts.QPS,
		Burst:       opts.Burst,
		UserAgent:   opts.UserAgent,
	}
	if cluster.Spec.InsecureSkipTLSVerification {
		// client-go refuses a CA together with Insecure.
		cfg.Insecure = true
	} else {
		cfg.CAData = secret.Data[clusterv1alpha1.SecretCADataKey]
	}
	if cluster.Spec.ProxyURL != "" {
		proxyURL, err := url.Parse(cluster.Spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("parsing spec.proxyURL: %w", err)
		}
		cfg.Proxy = http.ProxyURL(proxyURL)
		if len(cluster.Spec.ProxyHeader) > 0 {
			cfg.WrapTransport = proxyHeaderWrapper(proxyHeader(cluster.Spec.ProxyHeader))
		}
	}
	return cfg, nil
}

// proxyHeader turns spec.proxyHeader into HTTP headers; a value may list
// several comma-separated values, as Karmada allows.
func proxyHeader(in map[string]string) http.Header {
	h := make(http.Header, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		for v := range strings.SplitSeq(in[k], ",") {
			if v = strings.TrimSpace(v); v != "" {
				h.Add(k, v)
			}
		}
	}
	return h
}

// proxyHeaderWrapper sends the proxy headers: on the CONNECT that tunnels an
// https endpoint, and on each request to a plain-http endpoint, which goes
// through the proxy as is. client-go never shares a transport that has a
// Proxy set, so setting ProxyConnectHeader here touches no other member's.
func proxyHeaderWrapper(header http.Header) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		if t, ok := rt.(*http.Transport); ok {
			t.ProxyConnectHeader = header.Clone()
		}
		return &plainHTTPProxyHeader{header: header, next: rt}
	}
}

type plainHTTPProxyHeader struct {
	header http.Header
	next   http.RoundTripper
}

func (p *plainHTTPProxyHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		return p.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, vs := range p.header {
		req.Header[k] = slices.Clone(vs)
	}
	return p.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go's debugging wrappers see through.
func (p *plainHTTPProxyHeader) WrappedRoundTripper() http.RoundTripper { return p.next }
