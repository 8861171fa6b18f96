// Package app is the descheduler as a library: its flags and Run, used by
// cmd/main.go and by anything that runs it in-process (flotillactl local
// up, the e2e suites).
package app

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/descheduler/internal/descheduler"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
	"github.com/flotilla-io/flotilla/internal/eventrecorder"
	"github.com/flotilla-io/flotilla/internal/servedkinds"
)

// Default listeners: the health probes on karmada-descheduler's port;
// metrics only when asked for, as the other components.
const (
	DefaultMetricsAddr = "0"
	DefaultProbeAddr   = ":10358"
)

// Options are the descheduler's settings, set through BindFlags.
type Options struct {
	metricsAddr   string
	probeAddr     string
	leaderElect   bool
	leaderElectNS string
	qps           float64
	burst         int
	interval      time.Duration
	threshold     time.Duration
	workers       int
	estimators    estimatorrpc.DialOptions
}

// BindFlags registers the flags on fs with their defaults, karmada-descheduler's.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", DefaultMetricsAddr, "Address of the metrics endpoint, e.g. :8080; 0 disables it.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", DefaultProbeAddr, `Address of the health probe endpoint; "0" disables it.`)
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader so that only one descheduler instance is active.")
	fs.StringVar(&o.leaderElectNS, "leader-elect-resource-namespace", clusterv1alpha1.NamespaceSystem, "Namespace of the leader election lease.")
	fs.Float64Var(&o.qps, "kube-api-qps", 40, "Client-side QPS limit towards the API server.")
	fs.IntVar(&o.burst, "kube-api-burst", 60, "Client-side burst towards the API server.")
	fs.DurationVar(&o.interval, "descheduling-interval", 2*time.Minute, "Time between two passes over the bindings.")
	fs.DurationVar(&o.threshold, "unschedulable-threshold", 5*time.Minute, "How long a pod must have been unschedulable for its replica to move.")
	fs.IntVar(&o.workers, "workers", 4, "Bindings descheduled at once.")
	o.estimators.BindFlags(fs)
}

// ParseOptions returns the options that args give, every other flag at its
// default.
func ParseOptions(args ...string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("descheduler", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("descheduler options: %w", err)
	}
	return o, o.validate()
}

func (o Options) validate() error {
	if o.interval <= 0 {
		return fmt.Errorf("--descheduling-interval: %s must be positive", o.interval)
	}
	if o.threshold < 0 {
		return fmt.Errorf("--unschedulable-threshold: %s must not be negative", o.threshold)
	}
	return nil
}

// Run runs the descheduler against the control plane at cfg until ctx is
// done.
func Run(ctx context.Context, cfg *rest.Config, opts Options, logger logr.Logger) error {
	if err := opts.validate(); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("building the scheme: %w", err)
		}
	}
	restConfig := rest.CopyConfig(cfg)
	restConfig.QPS, restConfig.Burst = float32(opts.qps), opts.burst
	if err := servedkinds.Wait(ctx, restConfig, servedkinds.Options{Kinds: []schema.GroupVersionKind{workv1alpha2.GroupVersion.WithKind("ResourceBinding")}, ProbeAddr: opts.probeAddr}, logger.WithName("setup")); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                  scheme,
		Logger:                  logger,
		Cache:                   cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		Metrics:                 metricsserver.Options{BindAddress: opts.metricsAddr},
		HealthProbeBindAddress:  opts.probeAddr,
		LeaderElection:          opts.leaderElect,
		LeaderElectionID:        "descheduler.flotilla.io",
		LeaderElectionNamespace: opts.leaderElectNS,
		// As the scheduler: ctx's values, not its cancellation, which would
		// leave the manager waiting for runnables cancelled while starting.
		BaseContext: func() context.Context { return context.WithoutCancel(ctx) },
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	recorders, err := eventrecorder.New(cfg, scheme, eventrecorder.Options{})
	if err != nil {
		return err
	}
	if err := mgr.Add(recorders); err != nil {
		return fmt.Errorf("adding the event recorder: %w", err)
	}
	dialer, err := estimatorrpc.NewDialer(opts.estimators, mgr.GetAPIReader())
	if err != nil {
		return err
	}
	defer dialer.Close()
	d := descheduler.New(mgr.GetClient(), dialer, descheduler.Options{
		Interval:  opts.interval,
		Threshold: opts.threshold,
		Workers:   opts.workers,
		Recorder:  recorders.NewRecorder("flotilla-descheduler"),
	})
	if err := mgr.Add(d); err != nil {
		return fmt.Errorf("adding the descheduler: %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
