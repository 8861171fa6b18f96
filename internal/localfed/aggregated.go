package localfed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"sigs.k8s.io/controller-runtime/pkg/log"

	aggregatedapp "github.com/flotilla-io/flotilla/components/aggregated-apiserver/app"
)

// componentAggregated names the aggregated API server's files in the
// control plane's directory.
const componentAggregated = "aggregated-apiserver"

// aggregatedServer is the control plane's aggregated API server, run in
// this process the way a deployment runs karmada-aggregated-apiserver next
// to the API server: on 127.0.0.1 with a certificate of the control plane's
// CA, on the control plane's etcd and prefix, registered by an APIService
// whose Service is an ExternalName of 127.0.0.1.
type aggregatedServer struct {
	// name is what the server is, in errors; the aggregated API server
	// when empty.
	name   string
	cancel context.CancelFunc
	done   chan error
}

// prepareAggregated gives an in-process aggregated server of the control
// plane a port on 127.0.0.1, a serving certificate of the control plane's CA
// for it and for its Service in karmada-system, and a kubeconfig.
func (f *Federation) prepareAggregated(c *Cluster, component, service string) (int, keyPair, string, error) {
	port, err := f.ports.next()
	if err != nil {
		return 0, keyPair{}, "", err
	}
	serving, err := c.ca.issue(certRequest{
		commonName: service,
		server:     true,
		ips:        []net.IP{net.IPv4(127, 0, 0, 1)},
		dnsNames:   []string{"localhost", service + "." + NamespaceSystem + ".svc"},
	})
	if err != nil {
		return 0, keyPair{}, "", err
	}
	if err := c.writeComponentKubeconfigs(component); err != nil {
		return 0, keyPair{}, "", err
	}
	return port, serving, c.componentKubeconfig(component), nil
}

// serveAggregated runs an in-process aggregated API server (run, until its
// context ends) and registers it (register), returning once the control
// plane finds it available; a server that stops while registering ends the
// wait with its error. name is what the server is, in errors.
func serveAggregated(ctx, runCtx context.Context, name string, run, register func(context.Context) error) (*aggregatedServer, error) {
	runCtx, cancel := context.WithCancel(runCtx)
	s := &aggregatedServer{name: name, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- run(runCtx) }()
	regCtx, stopReg := context.WithCancel(ctx)
	defer stopReg()
	go func() {
		select {
		case err := <-s.done:
			s.done <- err
			stopReg()
		case <-regCtx.Done():
		}
	}()
	if err := register(regCtx); err != nil {
		select {
		case runErr := <-s.done:
			s.done <- runErr
			err = errors.Join(err, fmt.Errorf("%s stopped: %w", s.what(), runErr))
		default:
		}
		_ = s.stop()
		return nil, fmt.Errorf("starting %s: %w", s.what(), err)
	}
	return s, nil
}

// startAggregatedAPIServer starts it and returns once the control plane
// serves cluster.karmada.io from it. The Cluster CRD is installed before,
// so every start also takes Clusters over from the CRD, as an upgrade does.
func (f *Federation) startAggregatedAPIServer(ctx context.Context, c *Cluster) (*aggregatedServer, error) {
	port, serving, kubeconfig, err := f.prepareAggregated(c, componentAggregated, aggregatedapp.ServiceName)
	if err != nil {
		return nil, err
	}
	opts, err := aggregatedapp.NewOptions()
	if err != nil {
		return nil, err
	}
	fs := pflag.NewFlagSet(componentAggregated, pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse([]string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + f.etcdURL,
		"--etcd-prefix=" + c.etcdPrefix,
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
	}); err != nil {
		return nil, fmt.Errorf("aggregated API server flags: %w", err)
	}
	opts.ShutdownTimeout = 5 * time.Second
	// The certificate is given in memory rather than by file: a file is
	// watched with inotify, whose instances a machine running several
	// federations runs short of.
	if opts.Recommended.SecureServing.ServerCert.GeneratedCert, err = dynamiccertificates.NewStaticCertKeyContent(
		aggregatedapp.ServiceName, serving.certPEM, serving.keyPEM); err != nil {
		return nil, fmt.Errorf("the aggregated API server's certificate: %w", err)
	}
	reg := aggregatedapp.Registration{
		Namespace:    NamespaceSystem,
		ExternalName: "127.0.0.1",
		Port:         int32(port), //nolint:gosec // a port
		CABundle:     c.CAData,
	}
	s, err := serveAggregated(ctx, context.Background(), "", func(ctx context.Context) error { return aggregatedapp.Run(ctx, opts) },
		func(ctx context.Context) error { return aggregatedapp.Register(ctx, c.Config, reg) })
	if err != nil {
		return nil, err
	}
	log.FromContext(ctx).V(1).Info("Aggregated API server ready", "cluster", c.Name, "port", port)
	return s, nil
}

// stop stops the server and reports whether it had failed. Stopping nil
// does nothing.
func (s *aggregatedServer) stop() error {
	if s == nil {
		return nil
	}
	s.cancel()
	err := <-s.done
	s.done <- err
	if err != nil {
		return fmt.Errorf("%s: %w", s.what(), err)
	}
	return nil
}

// what names the server in errors.
func (s *aggregatedServer) what() string {
	if s.name == "" {
		return "the aggregated API server"
	}
	return "the " + s.name
}

// StartAggregatedAPIServer makes the control plane serve
// cluster.karmada.io/v1alpha1 from the aggregated API server, taking the
// Clusters over from the CRD; with Options.AggregatedAPIServer, Start does
// it. Starting it again does nothing.
func (f *Federation) StartAggregatedAPIServer(ctx context.Context) error {
	if f.ControlPlane == nil {
		return errors.New("the federation has no control plane")
	}
	if f.aggregated != nil {
		return nil
	}
	s, err := f.startAggregatedAPIServer(ctx, f.ControlPlane)
	if err != nil {
		return err
	}
	f.aggregated = s
	return nil
}
