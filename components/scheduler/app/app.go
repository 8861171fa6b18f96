// Package app is the scheduler as a library: its flags and Run, used by
// cmd/main.go and by anything that runs the scheduler in-process
// (flotillactl local up, the e2e suites).
package app

import (
	"context"
	"flag"
	"fmt"
	"strings"

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
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/estimator"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/scheduler"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
	"github.com/flotilla-io/flotilla/internal/eventrecorder"
	"github.com/flotilla-io/flotilla/internal/servedkinds"
)

// Default listeners. The health probes are on karmada-scheduler's port,
// apart from the controller-manager's and the webhook's, so that several
// components run on one host without colliding. Metrics are off unless
// asked for: Karmada's scheduler serves them on :8080, the port of the
// controller-manager's metrics.
const (
	DefaultMetricsAddr = "0"
	DefaultProbeAddr   = ":10351"
)

// Options are the scheduler's settings, set through BindFlags.
type Options struct {
	schedulerName  string
	metricsAddr    string
	probeAddr      string
	leaderElect    bool
	leaderElectNS  string
	workers        int
	qps            float64
	burst          int
	templateEvents bool
	pprofAddr      string
	eventQPS       float64
	eventBurst     int

	plugins plugins.Selection

	enableEstimator  bool
	skipPullEstimate bool
	estimators       estimatorrpc.DialOptions
}

// BindFlags registers the flags on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.schedulerName, "scheduler-name", policyv1alpha1.DefaultSchedulerName, "Schedule the bindings whose spec.schedulerName is this.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", DefaultMetricsAddr, "Address of the metrics endpoint, e.g. :8080; 0 disables it.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", DefaultProbeAddr, `Address of the health probe endpoint; "0" disables it.`)
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader so that only one scheduler instance is active.")
	fs.StringVar(&o.leaderElectNS, "leader-elect-resource-namespace", clusterv1alpha1.NamespaceSystem, "Namespace of the leader election lease.")
	fs.IntVar(&o.workers, "workers", 16, "Bindings scheduled concurrently.")
	fs.Float64Var(&o.qps, "kube-api-qps", 500, "Client-side QPS limit towards the API server.")
	fs.IntVar(&o.burst, "kube-api-burst", 1000, "Client-side burst towards the API server.")
	fs.Float64Var(&o.eventQPS, "event-qps", eventrecorder.DefaultQPS, "Events written per second, apart from --kube-api-qps; events beyond what the queue holds are dropped.")
	fs.IntVar(&o.eventBurst, "event-burst", eventrecorder.DefaultBurst, "Burst of event writes.")
	fs.StringVar(&o.pprofAddr, "profiling-bind-address", "", `Address serving Go's /debug/pprof profiles, e.g. 127.0.0.1:6061; empty disables it.`)
	fs.BoolVar(&o.templateEvents, "template-events", true, "Also record scheduling events on the resource templates.")
	fs.Var(pluginsFlag{&o.plugins}, "plugins", "A list of plugins to enable. '*' enables all in-tree plugins, 'foo' enables the plugin named 'foo', '*,-foo' disables the plugin named 'foo'.\nAll in-tree plugins: "+strings.Join(plugins.Names(), ",")+".")
	fs.BoolVar(&o.enableEstimator, "enable-scheduler-estimator", false, "Ask each member's scheduler estimator how many replicas fit, besides the general estimate from the Cluster's summary; the smaller answer wins.")
	fs.BoolVar(&o.skipPullEstimate, "disable-scheduler-estimator-in-pull-mode", false, "Do not ask the estimators of Pull clusters (with --enable-scheduler-estimator).")
	o.estimators.BindFlags(fs)
}

// ParseOptions returns the options that the command line args gives, with
// every other flag at its default; no args gives the defaults.
func ParseOptions(args ...string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("scheduler", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("scheduler options: %w", err)
	}
	return o, nil
}

// pluginsFlag is --plugins, checked as it is parsed so that a wrong name
// is reported with the flag's name.
type pluginsFlag struct{ s *plugins.Selection }

func (f pluginsFlag) String() string {
	if f.s == nil {
		return "*"
	}
	return f.s.String()
}

func (f pluginsFlag) Set(v string) error {
	sel, err := plugins.ParseSelection(strings.Split(v, ","))
	if err != nil {
		return err
	}
	*f.s = sel
	return nil
}

// The estimators' Services (--enable-scheduler-estimator).
// +kubebuilder:rbac:groups="",resources=services,verbs=get

// Run runs the scheduler against the control plane at cfg until ctx is done.
func Run(ctx context.Context, cfg *rest.Config, opts Options, logger logr.Logger) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme,
		workv1alpha2.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("building the scheme: %w", err)
		}
	}

	restConfig := rest.CopyConfig(cfg)
	restConfig.QPS, restConfig.Burst = float32(opts.qps), opts.burst
	// Started before the CRDs are applied or established, the scheduler
	// would fail its informers: wait, alive and not ready, until the API
	// server serves Karmada's kinds.
	if err := servedkinds.Wait(ctx, restConfig, servedkinds.Options{Kinds: RequiredKinds(), ProbeAddr: opts.probeAddr}, logger.WithName("setup")); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme: scheme,
		Logger: logger,
		// Nothing reads managed fields; the cache holds every binding.
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		Metrics:                metricsserver.Options{BindAddress: opts.metricsAddr},
		HealthProbeBindAddress: opts.probeAddr,
		PprofBindAddress:       opts.pprofAddr,
		LeaderElection:         opts.leaderElect,
		// One leader per scheduler name: differently named schedulers
		// place disjoint bindings and may run side by side.
		LeaderElectionID:        opts.schedulerName + ".scheduler.flotilla.io",
		LeaderElectionNamespace: opts.leaderElectNS,
		// ctx's values (its logger) but not its cancellation: runnables
		// cancelled with it during start never report ready, and the
		// manager would wait for them forever. It stops them itself.
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

	// Events have a rate and a bounded queue of their own: under load they
	// give way to the scheduler's writes instead of competing with them.
	recorders, err := eventrecorder.New(cfg, scheme, eventrecorder.Options{QPS: float32(opts.eventQPS), Burst: opts.eventBurst})
	if err != nil {
		return err
	}
	if err := mgr.Add(recorders); err != nil {
		return fmt.Errorf("adding the event recorder: %w", err)
	}
	var estimators []estimator.Estimator
	if opts.enableEstimator {
		// The Services are read once per estimator connection, past the
		// cache: the scheduler has no reason to watch every Service.
		dialer, err := estimatorrpc.NewDialer(opts.estimators, mgr.GetAPIReader())
		if err != nil {
			return err
		}
		defer dialer.Close()
		estimators = append(estimators, estimator.NewAccurate(dialer, opts.skipPullEstimate))
	}
	s := scheduler.New(mgr.GetClient(), mgr.GetCache(), scheduler.Options{
		SchedulerName:  opts.schedulerName,
		Workers:        opts.workers,
		Recorder:       recorders.NewRecorder("flotilla-scheduler"),
		TemplateEvents: opts.templateEvents,
		Estimators:     estimators,
		Plugins:        opts.plugins,
	})
	if err := s.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the scheduler: %w", err)
	}
	logger.Info("Starting scheduler", "schedulerName", opts.schedulerName)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// RequiredKinds are the kinds the scheduler watches: Run starts it once the
// API server serves every one.
func RequiredKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		clusterv1alpha1.GroupVersion.WithKind("Cluster"),
		workv1alpha2.GroupVersion.WithKind("ResourceBinding"),
		workv1alpha2.GroupVersion.WithKind("ClusterResourceBinding"),
	}
}
