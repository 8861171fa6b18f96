package estimatorrpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Defaults of the estimator client, Karmada's.
const (
	DefaultPort             = 10352
	DefaultServicePrefix    = "karmada-scheduler-estimator"
	DefaultServiceNamespace = clusterv1alpha1.NamespaceSystem
	DefaultTimeout          = 3 * time.Second
)

// DialOptions say how the scheduler and the descheduler reach the
// estimators, with karmada-scheduler's flags.
type DialOptions struct {
	Port             int
	ServicePrefix    string
	ServiceNamespace string
	Timeout          time.Duration
	// CAFile verifies the estimators' serving certificates; with
	// CertFile and KeyFile the client authenticates with its own.
	CAFile             string
	CertFile           string
	KeyFile            string
	InsecureSkipVerify bool
}

// BindFlags registers the options on fs under Karmada's names.
func (o *DialOptions) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Port, "scheduler-estimator-port", DefaultPort, "Port of the scheduler estimators' service.")
	fs.StringVar(&o.ServicePrefix, "scheduler-estimator-service-prefix", DefaultServicePrefix, "The estimator of cluster C is the Service <prefix>-C.")
	fs.StringVar(&o.ServiceNamespace, "scheduler-estimator-service-namespace", DefaultServiceNamespace, "Namespace of the estimators' Services.")
	fs.DurationVar(&o.Timeout, "scheduler-estimator-timeout", DefaultTimeout, "Time an estimator has to answer before the general estimate is used alone.")
	fs.StringVar(&o.CAFile, "scheduler-estimator-ca-file", "", "CA bundle verifying the estimators' serving certificates; empty connects without TLS unless --insecure-skip-estimator-verify.")
	fs.StringVar(&o.CertFile, "scheduler-estimator-cert-file", "", "Client certificate presented to the estimators.")
	fs.StringVar(&o.KeyFile, "scheduler-estimator-key-file", "", "Key of --scheduler-estimator-cert-file.")
	fs.BoolVar(&o.InsecureSkipVerify, "insecure-skip-estimator-verify", false, "Use TLS without verifying the estimators' certificates.")
}

// ServiceName is the name of cluster's estimator Service.
func (o *DialOptions) ServiceName(cluster string) string {
	return o.ServicePrefix + "-" + cluster
}

// credentials builds the transport credentials: plaintext unless a CA, a
// client certificate or skipping verification asks for TLS, as Karmada's
// client does.
func (o *DialOptions) credentials() (credentials.TransportCredentials, error) {
	if o.CAFile == "" && o.CertFile == "" && !o.InsecureSkipVerify {
		return insecure.NewCredentials(), nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // asked for by flag
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--scheduler-estimator-ca-file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--scheduler-estimator-ca-file %s holds no PEM certificate", o.CAFile)
		}
	}
	if o.CertFile != "" || o.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--scheduler-estimator-cert-file/--scheduler-estimator-key-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}

// Dialer keeps one connection per cluster's estimator.
type Dialer struct {
	opts  DialOptions
	creds credentials.TransportCredentials
	// services reads the estimators' Services in the control plane.
	services client.Reader

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
	// retryAt holds, for clusters whose estimator just failed, when to try
	// again: a fleet without estimators must not cost a Service read and a
	// dial per binding.
	retryAt map[string]time.Time
	now     func() time.Time
}

// RetryAfter is how long a cluster whose estimator failed is not asked.
const RetryAfter = 5 * time.Second

// ErrBackoff is Client's error while a failed estimator is left alone.
var ErrBackoff = errors.New("estimator failed recently; not asked until the back-off passes")

// NewDialer checks opts and reads the Services through services.
func NewDialer(opts DialOptions, services client.Reader) (*Dialer, error) {
	if opts.Port <= 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("--scheduler-estimator-port: %d is not a port", opts.Port)
	}
	if opts.Timeout <= 0 {
		return nil, fmt.Errorf("--scheduler-estimator-timeout: %s must be positive", opts.Timeout)
	}
	creds, err := opts.credentials()
	if err != nil {
		return nil, err
	}
	return &Dialer{opts: opts, creds: creds, services: services, conns: map[string]*grpc.ClientConn{}, retryAt: map[string]time.Time{}, now: time.Now}, nil
}

// Timeout is the time one call may take.
func (d *Dialer) Timeout() time.Duration { return d.opts.Timeout }

// Client returns a client of cluster's estimator, connecting on first use.
// gRPC connects lazily and reconnects by itself, so a connection is kept
// until Forget.
func (d *Dialer) Client(ctx context.Context, cluster string) (*Client, error) {
	d.mu.Lock()
	conn := d.conns[cluster]
	retryAt, failed := d.retryAt[cluster]
	d.mu.Unlock()
	if conn != nil {
		return NewClient(conn), nil
	}
	if failed && d.now().Before(retryAt) {
		return nil, ErrBackoff
	}
	addr, err := d.resolve(ctx, cluster)
	if err != nil {
		d.backOff(cluster)
		return nil, err
	}
	conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(d.creds))
	if err != nil {
		return nil, fmt.Errorf("connecting to the estimator of %s at %s: %w", cluster, addr, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if existing := d.conns[cluster]; existing != nil {
		// Another caller connected meanwhile.
		_ = conn.Close()
		return NewClient(existing), nil
	}
	d.conns[cluster] = conn
	return NewClient(conn), nil
}

// Failed tells the dialer how a call to cluster's estimator went wrong.
// An estimator that is unreachable or did not answer in time is forgotten:
// its connection closed, so that the next call, after RetryAfter, resolves
// the Service again (it may have moved). Errors the estimator itself
// returned change nothing.
func (d *Dialer) Failed(cluster string, err error) {
	if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
		return
	}
	d.backOff(cluster)
	d.mu.Lock()
	conn := d.conns[cluster]
	delete(d.conns, cluster)
	d.mu.Unlock()
	if conn != nil {
		_ = conn.Close()
	}
}

func (d *Dialer) backOff(cluster string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.retryAt[cluster] = d.now().Add(RetryAfter)
}

// Close closes every connection.
func (d *Dialer) Close() {
	d.mu.Lock()
	conns := d.conns
	d.conns = map[string]*grpc.ClientConn{}
	d.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// resolve finds the estimator's address as Karmada does: an ExternalName
// Service <prefix>-<cluster> in the control plane gives the host and, by
// the target port of its --scheduler-estimator-port port, the port; without
// such a Service the name itself is dialled, for estimators whose Service
// lives in the cluster hosting the control plane, where DNS finds it.
func (d *Dialer) resolve(ctx context.Context, cluster string) (string, error) {
	name := d.opts.ServiceName(cluster)
	port := int32(d.opts.Port)
	var svc corev1.Service
	err := d.services.Get(ctx, client.ObjectKey{Namespace: d.opts.ServiceNamespace, Name: name}, &svc)
	switch {
	case apierrors.IsNotFound(err):
		return net.JoinHostPort(name, strconv.Itoa(int(port))), nil
	case err != nil:
		return "", fmt.Errorf("reading the estimator Service %s/%s: %w", d.opts.ServiceNamespace, name, err)
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName {
		return "", fmt.Errorf("estimator Service %s/%s: type %s is not supported, only ExternalName", svc.Namespace, svc.Name, svc.Spec.Type)
	}
	for _, p := range svc.Spec.Ports {
		if p.Port != port {
			continue
		}
		if p.TargetPort.Type != intstr.Int {
			return "", fmt.Errorf("estimator Service %s/%s: port %d needs a numeric targetPort, got %q", svc.Namespace, svc.Name, port, p.TargetPort.String())
		}
		target := p.TargetPort.IntVal
		if target == 0 {
			target = port
		}
		return net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(target))), nil
	}
	return "", errors.New("estimator Service " + svc.Namespace + "/" + svc.Name + " has no port " + strconv.Itoa(int(port)))
}
