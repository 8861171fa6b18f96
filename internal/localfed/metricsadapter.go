package localfed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"sigs.k8s.io/controller-runtime/pkg/log"

	metricsadapterapp "github.com/flotilla-io/flotilla/components/metrics-adapter/app"
)

// componentMetricsAdapter names the metrics adapter's files in the control
// plane's directory.
const componentMetricsAdapter = "metrics-adapter"

// startMetricsAdapter runs the control plane's metrics adapter in this
// process, as a deployment runs karmada-metrics-adapter next to the API
// server: on 127.0.0.1 with a certificate of the control plane's CA,
// registered by APIServices whose Service is an ExternalName of 127.0.0.1.
// It returns once the control plane finds the APIServices available.
func (f *Federation) startMetricsAdapter(ctx context.Context, c *Cluster) (*aggregatedServer, error) {
	port, serving, kubeconfig, err := f.prepareAggregated(c, componentMetricsAdapter, metricsadapterapp.ServiceName)
	if err != nil {
		return nil, err
	}
	opts := metricsadapterapp.NewOptions()
	fs := pflag.NewFlagSet(componentMetricsAdapter, pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse([]string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
	}); err != nil {
		return nil, fmt.Errorf("metrics adapter flags: %w", err)
	}
	opts.ShutdownTimeout = metricsAdapterShutdown
	// In memory rather than by file: a file is watched with inotify.
	if opts.Server.SecureServing.ServerCert.GeneratedCert, err = dynamiccertificates.NewStaticCertKeyContent(
		metricsadapterapp.ServiceName, serving.certPEM, serving.keyPEM); err != nil {
		return nil, fmt.Errorf("the metrics adapter's certificate: %w", err)
	}
	reg := metricsadapterapp.Registration{
		Namespace:    NamespaceSystem,
		ExternalName: "127.0.0.1",
		Port:         int32(port), //nolint:gosec // a port
		CABundle:     c.CAData,
	}
	s, err := serveAggregated(ctx, log.IntoContext(context.Background(), log.FromContext(ctx).WithName(componentMetricsAdapter)), componentMetricsAdapter,
		func(ctx context.Context) error { return metricsadapterapp.Run(ctx, opts) },
		func(ctx context.Context) error { return metricsadapterapp.Register(ctx, c.Config, reg) })
	if err != nil {
		return nil, err
	}
	log.FromContext(ctx).V(1).Info("Metrics adapter ready", "cluster", c.Name, "port", port)
	return s, nil
}

// StartMetricsAdapter makes the control plane serve metrics.k8s.io and
// custom.metrics.k8s.io from the metrics adapter; with
// Options.MetricsAdapter, Start does it. Starting it again does nothing.
func (f *Federation) StartMetricsAdapter(ctx context.Context) error {
	if f.ControlPlane == nil {
		return errors.New("the federation has no control plane")
	}
	if f.metricsAdapter != nil {
		return nil
	}
	s, err := f.startMetricsAdapter(ctx, f.ControlPlane)
	if err != nil {
		return err
	}
	f.metricsAdapter = s
	return nil
}

// metricsAdapterShutdown bounds how long the adapter's requests in flight
// may take once it is stopped.
const metricsAdapterShutdown = 5 * time.Second
