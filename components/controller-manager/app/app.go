// Package app is the controller-manager as a library: its flags and Run, used
// by cmd/main.go and by anything that runs the controllers in-process
// (flotillactl local up, the e2e suites).
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/applicationfailover"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/bindingstatus"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cluster"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/clustertaintpolicy"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/csrapproval"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/dependencies"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/endpointslice"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/eviction"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/gracefuleviction"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/multiclusterservice"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/namespace"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/serviceexport"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/serviceimport"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/taintmanager"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/workloadrebalancer"
	"github.com/flotilla-io/flotilla/internal/clusterstatus"
	"github.com/flotilla-io/flotilla/internal/eventrecorder"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/features"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/servedkinds"
	"github.com/flotilla-io/flotilla/internal/workcache"
	"github.com/flotilla-io/flotilla/internal/workstatus"
)

// Default listeners, karmada-controller-manager's: each Flotilla component
// has its own health probe port, so that several run on one host
// (hostNetwork, a VM, the local federation) without colliding.
const (
	DefaultMetricsAddr = ":8080"
	DefaultProbeAddr   = ":10357"
)

// Options are the controller-manager's settings, set through BindFlags.
type Options struct {
	metricsAddr             string
	probeAddr               string
	leaderElect             bool
	leaderElectionNamespace string

	clusterStatusPeriod    time.Duration
	clusterHealth          cluster.HealthOptions
	clusterAPIQPS          float64
	clusterAPIBurst        int
	concurrentClusterSyncs int

	concurrentNamespaceSyncs int
	skippedNamespaces        string

	concurrentTemplateSyncs   int
	skippedAPIs               string
	concurrentBindingSyncs    int
	concurrentWorkSyncs       int
	concurrentWorkStatusSyncs int
	concurrentDependencySyncs int
	kubeAPIQPS                float64
	kubeAPIBurst              int
	pprofAddr                 string
	eventQPS                  float64
	eventBurst                int

	gates                        *features.Gates
	enableNoExecuteTaintEviction bool
	noExecuteTaintEvictionPurge  string
	gracefulEvictionTimeout      time.Duration
	selectable                   selectableOptions

	// Restartable lets Run be called again in the same process once an
	// earlier Run has returned, as the e2e suites do to restart the
	// controller-manager: controller-runtime otherwise refuses a controller
	// name it has already seen.
	Restartable bool
}

// BindFlags registers the flags on fs with their defaults. Names follow
// karmada-controller-manager's where the meaning is the same.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", DefaultMetricsAddr, `Address the metrics endpoint binds to; "0" disables it.`)
	fs.StringVar(&o.pprofAddr, "profiling-bind-address", "", `Address serving Go's /debug/pprof profiles, e.g. 127.0.0.1:6060; empty disables it.`)
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", DefaultProbeAddr, `Address the health and readiness probes bind to; "0" disables them.`)
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one of several replicas runs the controllers.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-elect-resource-namespace", clusterv1alpha1.NamespaceSystem, "Namespace of the leader election lease.")

	fs.DurationVar(&o.clusterStatusPeriod, "cluster-status-update-frequency", clusterstatus.DefaultPeriod, "How often the status of each member is collected.")
	fs.DurationVar(&o.clusterHealth.Period, "cluster-health-probe-period", cluster.DefaultHealthPeriod, "How often each member's /readyz is probed.")
	fs.DurationVar(&o.clusterHealth.Timeout, "cluster-health-probe-timeout", cluster.DefaultHealthTimeout, "Timeout of one health probe.")
	fs.IntVar(&o.clusterHealth.FailureThreshold, "cluster-health-failure-threshold", cluster.DefaultFailureThreshold, "Failed probes in a row before a Ready member is marked not ready.")
	fs.IntVar(&o.clusterHealth.SuccessThreshold, "cluster-health-success-threshold", cluster.DefaultSuccessThreshold, "Successful probes in a row before a not-ready member is marked Ready.")
	fs.DurationVar(&o.clusterHealth.LeaseGracePeriod, "cluster-monitor-grace-period", cluster.DefaultLeaseGracePeriod,
		"How long the agent of a Pull member may leave its lease unrenewed before the member's Ready turns Unknown; must exceed the agents' --cluster-lease-duration times --cluster-lease-renew-interval-fraction.")
	fs.Float64Var(&o.clusterAPIQPS, "cluster-api-qps", membercluster.DefaultQPS, "Requests per second to each member's API server.")
	fs.IntVar(&o.clusterAPIBurst, "cluster-api-burst", membercluster.DefaultBurst, "Burst of requests to each member's API server.")
	fs.IntVar(&o.concurrentClusterSyncs, "concurrent-cluster-syncs", 5, "Clusters probed, and their status collected, at once.")

	fs.IntVar(&o.concurrentNamespaceSyncs, "concurrent-namespace-syncs", 5, "Namespaces synced to members at once.")
	// Each sync waits on a few API round trips; with too few workers the
	// pipeline idles while the control plane has room (the propagation
	// benchmark, test/bench, doubled its throughput going from 5 to 20).
	fs.IntVar(&o.concurrentTemplateSyncs, "concurrent-resource-template-syncs", 20, "Resource templates matched to policies and turned into bindings at once.")
	fs.StringVar(&o.skippedAPIs, "skipped-propagating-apis", "", `APIs never propagated, Karmada's syntax: "<group>[/<version>[/<kind>,<kind>]];...", e.g. "/v1/Secret;networking.k8s.io".`)
	fs.IntVar(&o.concurrentBindingSyncs, "concurrent-resourcebinding-syncs", 20, "Bindings rendered into Works, and their status aggregated, at once (per binding kind).")
	fs.IntVar(&o.concurrentWorkSyncs, "concurrent-work-syncs", 20, "Works applied to members at once.")
	fs.IntVar(&o.concurrentWorkStatusSyncs, "concurrent-work-status-syncs", 20, "Works whose member status is reflected at once.")
	fs.IntVar(&o.concurrentDependencySyncs, "concurrent-dependency-syncs", 5, "Bindings whose dependencies are distributed (propagateDeps) at once.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 400, "Requests per second to the control plane's API server.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 800, "Burst of requests to the control plane's API server.")
	fs.Float64Var(&o.eventQPS, "event-qps", eventrecorder.DefaultQPS, "Events written per second to the control plane, apart from --kube-api-qps; events beyond what the queue holds are dropped.")
	fs.IntVar(&o.eventBurst, "event-burst", eventrecorder.DefaultBurst, "Burst of event writes.")
	o.gates = features.New()
	o.gates.BindFlag(fs)
	fs.BoolVar(&o.enableNoExecuteTaintEviction, "enable-no-execute-taint-eviction", false,
		"Evict workloads from clusters tainted NoExecute that they do not tolerate (needs the Failover feature gate).")
	fs.StringVar(&o.noExecuteTaintEvictionPurge, "no-execute-taint-eviction-purge-mode", string(policyv1alpha1.PurgeModeGracefully),
		"How a copy evicted by a NoExecute taint is removed when its policy does not say: Gracefully (once the replacement is up) or Directly.")
	fs.DurationVar(&o.gracefulEvictionTimeout, "graceful-eviction-timeout", eviction.DefaultTimeout,
		"How long an evicted copy is kept at most while its replacement comes up, when the eviction sets no grace period.")
	o.selectable.bindFlags(fs)
	fs.StringVar(&o.skippedNamespaces, "skipped-propagating-namespaces", "", "Comma-separated regular expressions; matching namespaces are not propagated to members. Reserved namespaces and default never are.")
}

// featureGates are the gates set by --feature-gates; the defaults for
// Options not built by BindFlags.
func (o *Options) featureGates() *features.Gates {
	if o.gates == nil {
		return features.New()
	}
	return o.gates
}

// validate checks the flags and compiles the skip list.
func (o *Options) validate() ([]*regexp.Regexp, error) {
	var errs []error
	positive := map[string]float64{
		"cluster-status-update-frequency":    o.clusterStatusPeriod.Seconds(),
		"cluster-health-probe-period":        o.clusterHealth.Period.Seconds(),
		"cluster-health-probe-timeout":       o.clusterHealth.Timeout.Seconds(),
		"cluster-health-failure-threshold":   float64(o.clusterHealth.FailureThreshold),
		"cluster-health-success-threshold":   float64(o.clusterHealth.SuccessThreshold),
		"cluster-monitor-grace-period":       o.clusterHealth.LeaseGracePeriod.Seconds(),
		"cluster-api-qps":                    o.clusterAPIQPS,
		"cluster-api-burst":                  float64(o.clusterAPIBurst),
		"concurrent-cluster-syncs":           float64(o.concurrentClusterSyncs),
		"concurrent-namespace-syncs":         float64(o.concurrentNamespaceSyncs),
		"concurrent-resourcebinding-syncs":   float64(o.concurrentBindingSyncs),
		"concurrent-resource-template-syncs": float64(o.concurrentTemplateSyncs),
		"concurrent-work-syncs":              float64(o.concurrentWorkSyncs),
		"concurrent-work-status-syncs":       float64(o.concurrentWorkStatusSyncs),
		"concurrent-dependency-syncs":        float64(o.concurrentDependencySyncs),
		"kube-api-qps":                       o.kubeAPIQPS,
		"kube-api-burst":                     float64(o.kubeAPIBurst),
	}
	for name, v := range positive {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be positive", name))
		}
	}
	switch policyv1alpha1.PurgeMode(o.noExecuteTaintEvictionPurge) {
	case policyv1alpha1.PurgeModeGracefully, policyv1alpha1.PurgeModeDirectly:
	default:
		errs = append(errs, fmt.Errorf("--no-execute-taint-eviction-purge-mode must be Gracefully or Directly, got %q", o.noExecuteTaintEvictionPurge))
	}
	if _, err := o.selectable.selection(); err != nil {
		errs = append(errs, err)
	}
	if o.gracefulEvictionTimeout <= 0 {
		errs = append(errs, errors.New("--graceful-eviction-timeout must be positive"))
	}
	var skipped []*regexp.Regexp
	for expr := range strings.SplitSeq(o.skippedNamespaces, ",") {
		if expr = strings.TrimSpace(expr); expr == "" {
			continue
		}
		// Anchored: "istio-.*" means namespaces starting with istio-, as in Karmada.
		re, err := regexp.Compile("^(?:" + expr + ")$")
		if err != nil {
			errs = append(errs, fmt.Errorf("--skipped-propagating-namespaces: %w", err))
			continue
		}
		skipped = append(skipped, re)
	}
	return skipped, errors.Join(errs...)
}

// failoverControllers are the failover controllers the feature gates and
// flags turn on, with Karmada's conditions: the ClusterTaintPolicy and
// application failover controllers with Failover, the taint manager with
// it and --enable-no-execute-taint-eviction, the graceful eviction
// controllers with GracefulEviction.
func failoverControllers(mgr ctrl.Manager, opts Options, recorders *eventrecorder.Broadcaster, interp *interpreter.Chain) []controllerSetup {
	gates := opts.featureGates()
	graceful, preserve := gates.Enabled(features.GracefulEviction), gates.Enabled(features.StatefulFailoverInjection)
	var out []controllerSetup
	if gates.Enabled(features.Failover) {
		out = append(out, controllerSetup{clustertaintpolicy.ControllerName, (&clustertaintpolicy.Reconciler{
			Client:   mgr.GetClient(),
			Recorder: recorders.NewRecorder(clustertaintpolicy.ControllerName),
		}).SetupWithManager})
		if opts.enableNoExecuteTaintEviction {
			out = append(out, controllerSetup{taintmanager.ControllerName, (&taintmanager.Reconciler{
				Client:                  mgr.GetClient(),
				Recorder:                recorders.NewRecorder(taintmanager.ControllerName),
				PurgeMode:               policyv1alpha1.PurgeMode(opts.noExecuteTaintEvictionPurge),
				Graceful:                graceful,
				PreserveState:           preserve,
				MaxConcurrentReconciles: opts.concurrentClusterSyncs,
			}).SetupWithManager})
		}
		appFailover := func(name string) *applicationfailover.Reconciler {
			return &applicationfailover.Reconciler{Client: mgr.GetClient(), Recorder: recorders.NewRecorder(name), Interpreter: interp,
				Graceful: graceful, PreserveState: preserve, MaxConcurrentReconciles: opts.concurrentBindingSyncs}
		}
		out = append(out,
			controllerSetup{applicationfailover.ResourceBindingControllerName,
				appFailover(applicationfailover.ResourceBindingControllerName).SetupWithManager},
			controllerSetup{applicationfailover.ClusterResourceBindingControllerName,
				appFailover(applicationfailover.ClusterResourceBindingControllerName).SetupClusterWithManager})
	}
	if graceful {
		ender := func(name string) *gracefuleviction.Reconciler {
			return &gracefuleviction.Reconciler{Client: mgr.GetClient(), Recorder: recorders.NewRecorder(name),
				Timeout: opts.gracefulEvictionTimeout, MaxConcurrentReconciles: opts.concurrentBindingSyncs}
		}
		out = append(out,
			controllerSetup{gracefuleviction.ResourceBindingControllerName,
				ender(gracefuleviction.ResourceBindingControllerName).SetupWithManager},
			controllerSetup{gracefuleviction.ClusterResourceBindingControllerName,
				ender(gracefuleviction.ClusterResourceBindingControllerName).SetupClusterWithManager})
	}
	return out
}

// serviceControllers are the multi-cluster service controllers, Karmada's
// serviceExport, endpointSlice, serviceImport, multiclusterservice,
// endpointsliceCollect and endpointsliceDispatch.
func serviceControllers(mgr ctrl.Manager, opts Options, recorders *eventrecorder.Broadcaster, informers *membercluster.InformerManager) ([]controllerSetup, error) {
	sel, err := opts.selectable.selection()
	if err != nil {
		return nil, err
	}
	named := []struct {
		name  string
		setup controllerSetup
	}{
		{ServiceExport, controllerSetup{serviceexport.ControllerName, (&serviceexport.Reconciler{Client: mgr.GetClient(), Informers: informers}).SetupWithManager}},
		{EndpointSlice, controllerSetup{endpointslice.ControllerName, (&endpointslice.Reconciler{Client: mgr.GetClient()}).SetupWithManager}},
		{ServiceImport, controllerSetup{serviceimport.ControllerName, (&serviceimport.Reconciler{Client: mgr.GetClient(),
			Recorder: recorders.NewRecorder(serviceimport.ControllerName)}).SetupWithManager}},
		{MultiClusterService, controllerSetup{multiclusterservice.ControllerName, (&multiclusterservice.Reconciler{Client: mgr.GetClient(),
			Recorder: recorders.NewRecorder(multiclusterservice.ControllerName)}).SetupWithManager}},
		{EndpointSliceCollect, controllerSetup{multiclusterservice.CollectControllerName, (&multiclusterservice.CollectReconciler{Client: mgr.GetClient(), Informers: informers}).SetupWithManager}},
		{EndpointSliceDispatch, controllerSetup{multiclusterservice.DispatchControllerName, (&multiclusterservice.DispatchReconciler{Client: mgr.GetClient()}).SetupWithManager}},
	}
	var out []controllerSetup
	for _, c := range named {
		if sel.enabled(c.name) {
			out = append(out, c.setup)
		}
	}
	return out, nil
}

// controllerSetup adds one controller to the manager.
type controllerSetup struct {
	name  string
	setup func(ctrl.Manager) error
}

// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Run runs the manager on the control plane at cfg until ctx is done.
func Run(ctx context.Context, cfg *rest.Config, opts Options, logger logr.Logger) error {
	skipped, err := opts.validate()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		workv1alpha1.AddToScheme, workv1alpha2.AddToScheme, policyv1alpha1.AddToScheme, configv1alpha1.AddToScheme,
		appsv1alpha1.AddToScheme, autoscalingv1alpha1.AddToScheme, multiclusterv1alpha1.AddToScheme, networkingv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("building scheme: %w", err)
		}
	}

	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(opts.kubeAPIQPS), opts.kubeAPIBurst
	// Started before the CRDs are applied or established, the controllers
	// would fail their informers: wait, alive and not ready, until the API
	// server serves Karmada's kinds.
	if err := servedkinds.Wait(ctx, cfg, servedkinds.Options{Kinds: RequiredKinds(), ProbeAddr: opts.probeAddr}, logger.WithName("setup")); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Logger: logger,
		// The cache keeps thousands of Works and bindings: without managed
		// fields, and Works' manifests and statuses deflated.
		Cache:                   workcache.Options(),
		Metrics:                 metricsserver.Options{BindAddress: opts.metricsAddr},
		HealthProbeBindAddress:  opts.probeAddr,
		PprofBindAddress:        opts.pprofAddr,
		LeaderElection:          opts.leaderElect,
		LeaderElectionID:        "flotilla-controller-manager",
		LeaderElectionNamespace: opts.leaderElectionNamespace,
		// Shutdown is quick anyway; the lease goes at once for the next leader.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: ptr.To(opts.Restartable)},
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}

	// Clusters and their Secrets are read through the manager's cache, as
	// Karmada does.
	members := membercluster.NewClientCache(mgr.GetClient(), nil, membercluster.Options{
		QPS:       float32(opts.clusterAPIQPS),
		Burst:     opts.clusterAPIBurst,
		UserAgent: "flotilla-controller-manager",
	})
	informers := membercluster.NewInformerManager(members, logger.WithName("member-informers"))
	if err := mgr.Add(informers); err != nil {
		return fmt.Errorf("adding member informers: %w", err)
	}

	// The interpreter answers from customizations and webhook configurations
	// watched through the manager's cache; until those have synced its calls
	// fail with ErrNotReady and the controllers retry.
	interp, err := interpreter.New(ctx, interpreter.Options{Informers: mgr.GetCache()})
	if err != nil {
		return fmt.Errorf("building the resource interpreter: %w", err)
	}
	skippedAPIs, err := detector.ParseSkippedAPIs(opts.skippedAPIs)
	if err != nil {
		return fmt.Errorf("--skipped-propagating-apis: %w", err)
	}
	// Events have a rate and a bounded queue of their own: under load they
	// give way to the controllers' writes instead of competing with them.
	recorders, err := eventrecorder.New(cfg, scheme, eventrecorder.Options{QPS: float32(opts.eventQPS), Burst: opts.eventBurst})
	if err != nil {
		return err
	}
	if err := mgr.Add(recorders); err != nil {
		return fmt.Errorf("adding the event recorder: %w", err)
	}
	det, err := detector.SetupWithManager(mgr, detector.Options{
		Interpreter:       interp,
		Recorder:          recorders.NewRecorder(detector.Name),
		SkippedAPIs:       skippedAPIs,
		SkippedNamespaces: skipped,
		Workers:           opts.concurrentTemplateSyncs,
	})
	if err != nil {
		return fmt.Errorf("setting up the detector: %w", err)
	}
	// Templates come from the detector's informers, which hold every
	// template already; the API server only when those are behind.
	templates := binding.TemplateReader{Cache: det, API: mgr.GetAPIReader()}
	// Work status hands drifted or deleted member objects back to execution.
	reapply := make(chan event.GenericEvent, 1024)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating clientset: %w", err)
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating uncached client: %w", err)
	}

	selected, err := selectedControllers(mgr, opts, recorders, members)
	if err != nil {
		return err
	}
	services, err := serviceControllers(mgr, opts, recorders, informers)
	if err != nil {
		return err
	}
	controllers := slices.Concat([]controllerSetup{
		{cluster.ControllerName, (&cluster.Reconciler{
			Client:                  mgr.GetClient(),
			APIReader:               mgr.GetAPIReader(),
			Recorder:                recorders.NewRecorder(cluster.ControllerName),
			Members:                 members,
			Informers:               informers,
			Health:                  opts.clusterHealth,
			MaxConcurrentReconciles: opts.concurrentClusterSyncs,
		}).SetupWithManager},
		{clusterstatus.ControllerName, (&clusterstatus.Reconciler{
			Client:                  mgr.GetClient(),
			Members:                 members,
			Informers:               informers,
			Period:                  opts.clusterStatusPeriod,
			MaxConcurrentReconciles: opts.concurrentClusterSyncs,
		}).SetupWithManager},
		{binding.ControllerName, (&binding.Reconciler{
			Client:                  mgr.GetClient(),
			Templates:               templates,
			Interpreter:             interp,
			Recorder:                recorders.NewRecorder(binding.ControllerName),
			MaxConcurrentReconciles: opts.concurrentBindingSyncs,
			InjectPreservedState:    opts.featureGates().Enabled(features.StatefulFailoverInjection),
		}).SetupWithManager},
		{bindingstatus.ControllerName, (&bindingstatus.Reconciler{
			Client:                  mgr.GetClient(),
			Templates:               templates,
			Interpreter:             interp,
			Recorder:                recorders.NewRecorder(bindingstatus.ControllerName),
			MaxConcurrentReconciles: opts.concurrentBindingSyncs,
		}).SetupWithManager},
		{execution.ControllerName, (&execution.Reconciler{
			Client:                  mgr.GetClient(),
			Recorder:                recorders.NewRecorder(execution.ControllerName),
			Members:                 members,
			Informers:               informers,
			Interpreter:             interp,
			Reapply:                 reapply,
			MaxConcurrentReconciles: opts.concurrentWorkSyncs,
		}).SetupWithManager},
		{workstatus.ControllerName, (&workstatus.Reconciler{
			Client:                  mgr.GetClient(),
			Recorder:                recorders.NewRecorder(workstatus.ControllerName),
			Members:                 members,
			Informers:               informers,
			Interpreter:             interp,
			Reapply:                 reapply,
			MaxConcurrentReconciles: opts.concurrentWorkStatusSyncs,
		}).SetupWithManager},
		{dependencies.ControllerName, (&dependencies.Reconciler{
			Client:                  mgr.GetClient(),
			Templates:               templates,
			Interpreter:             interp,
			Recorder:                recorders.NewRecorder(dependencies.ControllerName),
			MaxConcurrentReconciles: opts.concurrentDependencySyncs,
		}).SetupWithManager},
		{namespace.ControllerName, (&namespace.Reconciler{
			Client:                  mgr.GetClient(),
			Recorder:                recorders.NewRecorder(namespace.ControllerName),
			SkippedNamespaces:       skipped,
			MaxConcurrentReconciles: opts.concurrentNamespaceSyncs,
		}).SetupWithManager},
		{csrapproval.ControllerName, (&csrapproval.Reconciler{Client: mgr.GetClient(), Kube: kube, Direct: direct}).SetupWithManager},
		{workloadrebalancer.ControllerName, (&workloadrebalancer.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager},
	}, failoverControllers(mgr, opts, recorders, interp), services, selected)
	for _, c := range controllers {
		if err := c.setup(mgr); err != nil {
			return fmt.Errorf("setting up %s: %w", c.name, err)
		}
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding readiness check: %w", err)
	}

	logger.WithName("setup").Info("Starting controller-manager")
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	return nil
}

// RequiredKinds are the kinds the controllers watch: Run starts them once
// the API server serves every one.
func RequiredKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		clusterv1alpha1.GroupVersion.WithKind("Cluster"),
		policyv1alpha1.GroupVersion.WithKind("PropagationPolicy"),
		policyv1alpha1.GroupVersion.WithKind("ClusterPropagationPolicy"),
		policyv1alpha1.GroupVersion.WithKind("OverridePolicy"),
		policyv1alpha1.GroupVersion.WithKind("ClusterOverridePolicy"),
		workv1alpha1.GroupVersion.WithKind("Work"),
		workv1alpha2.GroupVersion.WithKind("ResourceBinding"),
		workv1alpha2.GroupVersion.WithKind("ClusterResourceBinding"),
		configv1alpha1.GroupVersion.WithKind("ResourceInterpreterCustomization"),
		configv1alpha1.GroupVersion.WithKind("ResourceInterpreterWebhookConfiguration"),
		appsv1alpha1.GroupVersion.WithKind("WorkloadRebalancer"),
		multiclusterv1alpha1.GroupVersion.WithKind("ServiceImport"),
		networkingv1alpha1.GroupVersion.WithKind("MultiClusterService"),
		policyv1alpha1.GroupVersion.WithKind("FederatedResourceQuota"),
		autoscalingv1alpha1.GroupVersion.WithKind("CronFederatedHPA"),
		autoscalingv1alpha1.GroupVersion.WithKind("FederatedHPA"),
	}
}

// ParseOptions returns the options that the command line args gives, with
// every other flag at its default; no args gives the defaults.
func ParseOptions(args ...string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("controller-manager options: %w", err)
	}
	return o, nil
}
