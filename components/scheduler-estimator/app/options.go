package app

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"google.golang.org/grpc/credentials"
	"k8s.io/component-base/featuregate"
)

// Defaults, karmada-scheduler-estimator's: gRPC on 10352, health probes on
// 10351. Metrics are off unless asked for, as for Flotilla's other
// components (Karmada's estimator serves them on :8080, the
// controller-manager's metrics port).
const (
	DefaultServerPort  = 10352
	DefaultProbeAddr   = ":10351"
	DefaultMetricsAddr = "0"
	DefaultParallelism = 16
)

// Karmada's estimator feature gates that change answers here. Naming any
// other gate is an error, not a silent no-op.
const (
	// ResourceQuotaEstimate limits answers by the ResourceQuotas of the
	// request's namespace. On here; Karmada's estimator has it off (alpha).
	ResourceQuotaEstimate featuregate.Feature = "ResourceQuotaEstimate"
	// SchedulingOvercommitProtection takes the assumed workloads of a
	// request (placed, not bound yet) from the room before answering.
	SchedulingOvercommitProtection featuregate.Feature = "SchedulingOvercommitProtection"
)

var gateDefaults = map[featuregate.Feature]featuregate.FeatureSpec{
	ResourceQuotaEstimate:          {Default: true, PreRelease: featuregate.Beta},
	SchedulingOvercommitProtection: {Default: true, PreRelease: featuregate.Beta},
}

// gates is --feature-gates: the estimator's own set, since several
// estimators may run in one process, each with its flags.
type gates struct {
	featuregate.MutableFeatureGate
}

func newGates() *gates {
	g := featuregate.NewFeatureGate()
	if err := g.Add(gateDefaults); err != nil {
		// The table above is fixed: adding it to a new gate cannot fail.
		panic(fmt.Sprintf("registering feature gates: %v", err))
	}
	return &gates{MutableFeatureGate: g}
}

func (g *gates) String() string {
	if s, ok := g.MutableFeatureGate.(fmt.Stringer); ok {
		return s.String()
	}
	return ""
}

// enabled reports whether f is on; at its default without BindFlags.
func (o *Options) enabled(f featuregate.Feature) bool {
	if o.gates == nil {
		return gateDefaults[f].Default
	}
	return o.gates.Enabled(f)
}

// Options are the estimator's settings, set through BindFlags. The flags
// are karmada-scheduler-estimator's, so that its manifests run this binary.
type Options struct {
	clusterName              string
	bindAddress              string
	serverPort               int
	certFile                 string
	keyFile                  string
	clientCAFile             string
	insecureSkipClientVerify bool
	probeAddr                string
	metricsAddr              string
	qps                      float64
	burst                    int
	parallelism              int
	enablePprof              bool
	pprofAddr                string
	gates                    *gates

	// Listener, when set, is where the gRPC service is served instead of
	// --bind-address:--server-port. A caller running the estimator
	// in-process (tests, local federations) listens on a free port first,
	// so that it knows the address before Run serves; Run closes it.
	Listener net.Listener
}

// BindFlags registers the flags on fs with their defaults. --kubeconfig
// (and --master) are the command's: Run is given the member's rest.Config.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.clusterName, "cluster-name", "", "Name of the member cluster the estimator serves; requests for another cluster are refused.")
	fs.StringVar(&o.bindAddress, "bind-address", "0.0.0.0", "IP address the gRPC server listens on, with --server-port.")
	fs.IntVar(&o.serverPort, "server-port", DefaultServerPort, "Port of the gRPC server.")
	fs.StringVar(&o.certFile, "grpc-auth-cert-file", "", "Certificate of the gRPC server (PEM); with --grpc-auth-key-file it serves TLS, else plaintext.")
	fs.StringVar(&o.keyFile, "grpc-auth-key-file", "", "Private key of --grpc-auth-cert-file (PEM).")
	fs.StringVar(&o.clientCAFile, "grpc-client-ca-file", "", "CA bundle (PEM) that clients' certificates must be signed by; needs TLS.")
	fs.BoolVar(&o.insecureSkipClientVerify, "insecure-skip-grpc-client-verify", false, "Do not ask clients for a certificate even when --grpc-client-ca-file is set.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", DefaultProbeAddr, `Address of /healthz and /readyz; "0" disables them.`)
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", DefaultMetricsAddr, `Address of the Prometheus metrics endpoint, e.g. :8080; "0" disables it.`)
	fs.Float64Var(&o.qps, "kube-api-qps", 20, "Client-side QPS limit towards the member's API server.")
	fs.IntVar(&o.burst, "kube-api-burst", 30, "Client-side burst towards the member's API server.")
	fs.IntVar(&o.parallelism, "parallelism", DefaultParallelism, "Goroutines that count the nodes of one answer; must be greater than 0.")
	fs.BoolVar(&o.enablePprof, "enable-pprof", false, "Serve Go's /debug/pprof profiles on --profiling-bind-address.")
	fs.StringVar(&o.pprofAddr, "profiling-bind-address", ":6060", "Address of the profiles, with --enable-pprof.")
	o.gates = newGates()
	fs.Var(o.gates, "feature-gates", "Karmada's estimator feature gates, key=value pairs. Options are:\n"+strings.Join(o.gates.KnownFeatures(), "\n"))
}

// ParseOptions returns the options that the command line args gives, with
// every other flag at its default; no args gives the defaults.
func ParseOptions(args ...string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("scheduler-estimator", flag.ContinueOnError)
	// The error returned names the flag; the usage is the command's to print.
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("scheduler-estimator options: %w", err)
	}
	return o, nil
}

// ClusterName is the member the options serve.
func (o *Options) ClusterName() string { return o.clusterName }

// Validate reports every flag with a bad value, by name.
func (o *Options) Validate() error {
	var errs []error
	if o.clusterName == "" {
		errs = append(errs, errors.New("--cluster-name: required"))
	}
	if o.serverPort < 0 || o.serverPort > 65535 {
		errs = append(errs, fmt.Errorf("--server-port: %d is not a port (0 to 65535)", o.serverPort))
	}
	if o.Listener == nil && net.ParseIP(o.bindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address: %q is not an IP address", o.bindAddress))
	}
	if (o.certFile == "") != (o.keyFile == "") {
		errs = append(errs, errors.New("--grpc-auth-cert-file and --grpc-auth-key-file: set both or neither"))
	}
	if o.clientCAFile != "" && o.certFile == "" {
		errs = append(errs, errors.New("--grpc-client-ca-file: client certificates need TLS; set --grpc-auth-cert-file and --grpc-auth-key-file"))
	}
	if o.parallelism <= 0 {
		errs = append(errs, fmt.Errorf("--parallelism: %d is not greater than 0", o.parallelism))
	}
	if o.qps <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps: %v is not greater than 0", o.qps))
	}
	if o.burst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-burst: %d is not greater than 0", o.burst))
	}
	return errors.Join(errs...)
}

// listen returns where the gRPC service is served.
func (o *Options) listen() (net.Listener, error) {
	if o.Listener != nil {
		return o.Listener, nil
	}
	addr := net.JoinHostPort(o.bindAddress, strconv.Itoa(o.serverPort))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--bind-address, --server-port: listening on %s: %w", addr, err)
	}
	return l, nil
}

// transportCredentials are the gRPC server's TLS settings, as Karmada's
// estimator has them: TLS 1.3 with the given certificate; with a client CA,
// clients must present a certificate it signed, unless
// --insecure-skip-grpc-client-verify. Nil for plaintext.
func (o *Options) transportCredentials() (credentials.TransportCredentials, error) {
	if o.certFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--grpc-auth-cert-file, --grpc-auth-key-file: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	if o.clientCAFile != "" {
		pem, err := os.ReadFile(o.clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--grpc-client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--grpc-client-ca-file: no PEM certificate in %s", o.clientCAFile)
		}
		cfg.ClientCAs = pool
		if !o.insecureSkipClientVerify {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	return credentials.NewTLS(cfg), nil
}
