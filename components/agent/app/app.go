// Package app is the agent as a library: its flags and Run, used by
// cmd/main.go and by whatever runs agents in-process (the local federation
// of flotillactl local up and the e2e suites).
//
// The agent runs inside a Pull member. It registers the member as a Cluster
// in Pull mode, renews the member's Lease in the control plane, reports the
// member's status and Ready condition, and applies the Works of
// karmada-es-<cluster> to the member with the controller-manager's own
// execution and work-status controllers, reflecting status back into them.
// Its flags are karmada-agent's.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/agent/internal/certrotation"
	"github.com/flotilla-io/flotilla/components/agent/internal/lease"
	"github.com/flotilla-io/flotilla/components/agent/internal/registration"
	"github.com/flotilla-io/flotilla/internal/bootstrap"
	"github.com/flotilla-io/flotilla/internal/clusterstatus"
	"github.com/flotilla-io/flotilla/internal/eventrecorder"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/features"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/join"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/ratelimiter"
	"github.com/flotilla-io/flotilla/internal/servedkinds"
	"github.com/flotilla-io/flotilla/internal/workcache"
	"github.com/flotilla-io/flotilla/internal/workstatus"
)

// Default listeners. The agent runs in a member, beside whatever else runs
// there, so its probe port is its own (karmada-agent's).
const (
	DefaultMetricsAddr = ":8080"
	DefaultProbeAddr   = ":10357"
)

// Controllers the agent runs, by karmada-agent's names for --controllers.
const (
	ControllerClusterStatus = "clusterStatus"
	ControllerExecution     = "execution"
	ControllerWorkStatus    = "workStatus"
	ControllerCertRotation  = "certRotation"
)

// allControllers are the controllers --controllers may name; "*" turns on
// all but offByDefault, as karmada-agent does.
var (
	allControllers = []string{ControllerClusterStatus, ControllerExecution, ControllerWorkStatus, ControllerCertRotation}
	offByDefault   = []string{ControllerCertRotation}
)

// Options are the agent's settings, set through BindFlags.
type Options struct {
	karmadaKubeconfig string
	karmadaContext    string

	clusterName        string
	clusterNamespace   string
	clusterAPIEndpoint string
	clusterProvider    string
	clusterRegion      string
	clusterZones       string

	clusterStatusPeriod   time.Duration
	clusterLeaseDuration  time.Duration
	clusterLeaseFraction  float64
	controllers           string
	gates                 *features.Gates
	metricsAddr           string
	probeAddr             string
	kubeAPIQPS            float64
	kubeAPIBurst          int
	clusterAPIQPS         float64
	clusterAPIBurst       int
	concurrentWorkSyncs   int
	concurrentStatusSyncs int
	certRotationInterval  time.Duration
	certRotationThreshold float64
	eventQPS              float64
	eventBurst            int
	leaderElect           bool
	leaderElectNamespace  string
	leaseDuration         time.Duration
	renewDeadline         time.Duration
	retryPeriod           time.Duration

	reportSecrets           string
	proxyServerAddress      string
	clusterSuccessThreshold time.Duration
	clusterFailureThreshold time.Duration
	resyncPeriod            time.Duration
	clusterCacheSyncTimeout time.Duration
	resourceModeling        bool
	concurrentClusterSyncs  int
	rateLimiter             ratelimiter.Options
	enablePprof             bool
	pprofAddr               string
	kubeconfigNamespace     string

	// Restartable lets Run be called again in the same process, and several
	// agents run in one process beside a controller-manager, as the local
	// federation does: controller-runtime otherwise refuses a controller
	// name it has already seen.
	Restartable bool
}

// BindFlags registers the flags on fs with their defaults; names and
// defaults are karmada-agent's. The member is reached with --kubeconfig
// (controller-runtime's flag) or the in-cluster configuration.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.karmadaKubeconfig, "karmada-kubeconfig", "", "Path to the control plane's kubeconfig.")
	fs.StringVar(&o.karmadaContext, "karmada-context", "", "Context of --karmada-kubeconfig to use; default: its current context.")
	fs.StringVar(&o.clusterName, "cluster-name", "", "Name of the member cluster the agent serves (its Cluster object in the control plane).")
	fs.StringVar(&o.clusterNamespace, "cluster-namespace", clusterv1alpha1.NamespaceClusterSecrets, "Namespace in the control plane of the member's Secrets and Lease.")
	fs.StringVar(&o.clusterAPIEndpoint, "cluster-api-endpoint", "", "API endpoint of the member, recorded in its Cluster; default: the host of the member's kubeconfig.")
	fs.StringVar(&o.clusterProvider, "cluster-provider", "", "Provider of the member, recorded in its Cluster for spread constraints.")
	fs.StringVar(&o.clusterRegion, "cluster-region", "", "Region of the member, recorded in its Cluster for spread constraints.")
	fs.StringVar(&o.clusterZones, "cluster-zones", "", "Comma-separated zones of the member, recorded in its Cluster for spread constraints.")
	fs.DurationVar(&o.clusterStatusPeriod, "cluster-status-update-frequency", clusterstatus.DefaultPeriod, "How often the member's status is collected and posted.")
	fs.DurationVar(&o.clusterLeaseDuration, "cluster-lease-duration", lease.DefaultDuration, "Expiration period of the member's lease.")
	fs.Float64Var(&o.clusterLeaseFraction, "cluster-lease-renew-interval-fraction", lease.DefaultRenewIntervalFraction, "Fraction of --cluster-lease-duration between two renewals.")
	fs.StringVar(&o.controllers, "controllers", "*", fmt.Sprintf(
		"Comma-separated controllers to run: '*' those on by default, 'foo' foo, '-foo' not foo. All: %s; off by default: %s.",
		strings.Join(allControllers, ", "), strings.Join(offByDefault, ", ")))
	fs.DurationVar(&o.certRotationInterval, "cert-rotation-checking-interval", certrotation.DefaultCheckingInterval,
		"How often the certRotation controller checks the agent's client certificate.")
	fs.Float64Var(&o.certRotationThreshold, "cert-rotation-remaining-time-threshold", certrotation.DefaultThreshold,
		"Fraction of its lifetime left below which the agent's client certificate is renewed.")
	o.gates = features.New()
	o.gates.BindFlag(fs)
	// Replicas of the agent elect a leader in the member, where they run
	// and may write (the control plane gives an agent no Leases there).
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "Elect a leader among the agent's replicas, with a Lease in the member, so that one runs the controllers.")
	fs.StringVar(&o.leaderElectNamespace, "leader-elect-resource-namespace", clusterv1alpha1.NamespaceSystem, "Namespace, in the member, of the leader election Lease.")
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a leader's Lease holds without renewal.")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader tries to renew before it gives up leading.")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "How often candidates try to acquire or renew the Lease.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", DefaultMetricsAddr, `Address the metrics endpoint binds to; "0" disables it.`)
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", DefaultProbeAddr, `Address the health and readiness probes bind to; "0" disables them.`)
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 40, "Requests per second to the control plane's API server.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 60, "Burst of requests to the control plane's API server.")
	fs.Float64Var(&o.clusterAPIQPS, "cluster-api-qps", membercluster.DefaultQPS, "Requests per second to the member's API server.")
	fs.IntVar(&o.clusterAPIBurst, "cluster-api-burst", membercluster.DefaultBurst, "Burst of requests to the member's API server.")
	fs.IntVar(&o.concurrentWorkSyncs, "concurrent-work-syncs", 5, "Works applied to the member at once.")
	fs.IntVar(&o.concurrentStatusSyncs, "concurrent-work-status-syncs", 5, "Works whose member status is reflected at once.")
	// The controller-manager's flags: every agent has a budget of its own,
	// so a federation of many Pull members writes that many times more
	// events than one controller-manager would for Push members.
	fs.Float64Var(&o.eventQPS, "event-qps", eventrecorder.DefaultQPS, "Events written per second to the control plane, apart from --kube-api-qps; events beyond what the queue holds are dropped.")
	fs.IntVar(&o.eventBurst, "event-burst", eventrecorder.DefaultBurst, "Burst of event writes.")

	fs.StringVar(&o.reportSecrets, "report-secrets", SecretKubeCredentials+","+SecretKubeImpersonator, fmt.Sprintf(
		"Comma-separated credentials of the member reported to the control plane at registration: %s (a full-access ServiceAccount's token, spec.secretRef), %s (an impersonator's token, spec.impersonatorSecretRef), or %s alone.",
		SecretKubeCredentials, SecretKubeImpersonator, SecretNone))
	fs.StringVar(&o.proxyServerAddress, "proxy-server-address", "", "URL (http, https or socks5) of the proxy through which the member is reached, recorded in its Cluster's spec.proxyURL. The agent's own connection to the control plane takes its proxy from --karmada-kubeconfig (proxy-url).")
	fs.DurationVar(&o.clusterSuccessThreshold, "cluster-success-threshold", clusterstatus.DefaultSuccessThreshold, "How long the member must have answered before a member that was not Ready is reported Ready.")
	fs.DurationVar(&o.clusterFailureThreshold, "cluster-failure-threshold", clusterstatus.DefaultFailureThreshold, "How long the member must have failed to answer before a Ready member is reported not Ready.")
	fs.DurationVar(&o.resyncPeriod, "resync-period", 0, "How often the informers of the control plane's objects replay their contents to the controllers; 0 never.")
	fs.DurationVar(&o.clusterCacheSyncTimeout, "cluster-cache-sync-timeout", 2*time.Minute, "How long a controller waits for its caches to fill at start before it fails.")
	fs.BoolVar(&o.resourceModeling, "enable-cluster-resource-modeling", true, "Count the member's nodes per grade of its Cluster's spec.resourceModels (resourceSummary.allocatableModelings), for the scheduler's estimates by resource model.")
	fs.IntVar(&o.concurrentClusterSyncs, "concurrent-cluster-syncs", 5, "Clusters whose status is collected at once.")
	o.rateLimiter.BindFlags(fs)
	fs.BoolVar(&o.enablePprof, "enable-pprof", false, "Serve Go's /debug/pprof profiles on --profiling-bind-address.")
	fs.StringVar(&o.pprofAddr, "profiling-bind-address", ":6060", "Address of the profiles, with --enable-pprof.")
	fs.StringVar(&o.kubeconfigNamespace, "karmada-kubeconfig-namespace", bootstrap.AgentNamespace,
		"Namespace, in the member, of the Secret karmada-kubeconfig into which the certRotation controller writes the renewed kubeconfig.")
}

// Values of --report-secrets, Karmada's.
const (
	SecretNone             = "None"
	SecretKubeCredentials  = "KubeCredentials"
	SecretKubeImpersonator = "KubeImpersonator"
)

// ReportedSecrets reads --report-secrets.
func ReportedSecrets(spec string) (join.Secrets, error) {
	var out join.Secrets
	none := false
	for item := range strings.SplitSeq(spec, ",") {
		switch strings.TrimSpace(item) {
		case SecretNone:
			none = true
		case SecretKubeCredentials:
			out.KubeCredentials = true
		case SecretKubeImpersonator:
			out.KubeImpersonator = true
		default:
			return join.Secrets{}, fmt.Errorf("--report-secrets: unknown value %q; valid: %s, %s, %s",
				strings.TrimSpace(item), SecretKubeCredentials, SecretKubeImpersonator, SecretNone)
		}
	}
	if none && out != (join.Secrets{}) {
		return join.Secrets{}, fmt.Errorf("--report-secrets: %s cannot be combined with other values, got %q", SecretNone, spec)
	}
	return out, nil
}

// validProxyURL checks --proxy-server-address as the controller-manager
// would read spec.proxyURL.
func validProxyURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("--proxy-server-address %q: %w", raw, err)
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return fmt.Errorf("--proxy-server-address %q: scheme must be http, https or socks5", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("--proxy-server-address %q: no host", raw)
	}
	return nil
}

// ParseOptions returns the options that args give, every other flag at its
// default.
func ParseOptions(args ...string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("agent options: %w", err)
	}
	return o, nil
}

// ClusterName is --cluster-name.
func (o *Options) ClusterName() string { return o.clusterName }

// validate checks the flags and returns the controllers to run.
func (o *Options) validate() ([]string, error) {
	var errs []error
	if o.clusterName == "" {
		errs = append(errs, errors.New("--cluster-name is required"))
	} else if msgs := validation.IsDNS1123Label(o.clusterName); len(msgs) > 0 {
		// The execution namespace karmada-es-<name> must be a valid name.
		errs = append(errs, fmt.Errorf("--cluster-name %q: %s", o.clusterName, strings.Join(msgs, "; ")))
	}
	if o.clusterNamespace != clusterv1alpha1.NamespaceClusterLeases {
		errs = append(errs, fmt.Errorf("--cluster-namespace must be %s, the namespace the cluster controller reads leases from; got %q",
			clusterv1alpha1.NamespaceClusterLeases, o.clusterNamespace))
	}
	positive := map[string]float64{
		"cluster-status-update-frequency": o.clusterStatusPeriod.Seconds(),
		"cluster-lease-duration":          o.clusterLeaseDuration.Seconds(),
		"kube-api-qps":                    o.kubeAPIQPS,
		"kube-api-burst":                  float64(o.kubeAPIBurst),
		"cluster-api-qps":                 o.clusterAPIQPS,
		"cluster-api-burst":               float64(o.clusterAPIBurst),
		"concurrent-work-syncs":           float64(o.concurrentWorkSyncs),
		"concurrent-work-status-syncs":    float64(o.concurrentStatusSyncs),
		"event-qps":                       o.eventQPS,
		"event-burst":                     float64(o.eventBurst),
		"cluster-cache-sync-timeout":      o.clusterCacheSyncTimeout.Seconds(),
		"concurrent-cluster-syncs":        float64(o.concurrentClusterSyncs),
	}
	for _, name := range slices.Sorted(maps.Keys(positive)) {
		if positive[name] <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be positive", name))
		}
	}
	if o.leaderElect && (o.leaseDuration <= o.renewDeadline || o.renewDeadline <= o.retryPeriod || o.retryPeriod <= 0) {
		errs = append(errs, fmt.Errorf("--leader-elect-lease-duration (%s) must exceed --leader-elect-renew-deadline (%s), which must exceed --leader-elect-retry-period (%s) > 0",
			o.leaseDuration, o.renewDeadline, o.retryPeriod))
	}
	if o.certRotationInterval <= 0 {
		errs = append(errs, errors.New("--cert-rotation-checking-interval must be positive"))
	}
	if o.certRotationThreshold <= 0 || o.certRotationThreshold >= 1 {
		errs = append(errs, fmt.Errorf("--cert-rotation-remaining-time-threshold must be between 0 and 1, got %v", o.certRotationThreshold))
	}
	if o.clusterLeaseFraction <= 0 || o.clusterLeaseFraction >= 1 {
		errs = append(errs, fmt.Errorf("--cluster-lease-renew-interval-fraction must be between 0 and 1, got %v", o.clusterLeaseFraction))
	}
	nonNegative := map[string]time.Duration{
		"cluster-success-threshold": o.clusterSuccessThreshold,
		"cluster-failure-threshold": o.clusterFailureThreshold,
		"resync-period":             o.resyncPeriod,
	}
	for _, name := range slices.Sorted(maps.Keys(nonNegative)) {
		if nonNegative[name] < 0 {
			errs = append(errs, fmt.Errorf("--%s must not be negative, got %s", name, nonNegative[name]))
		}
	}
	if _, err := ReportedSecrets(o.reportSecrets); err != nil {
		errs = append(errs, err)
	}
	if o.proxyServerAddress != "" {
		if err := validProxyURL(o.proxyServerAddress); err != nil {
			errs = append(errs, err)
		}
	}
	if err := o.rateLimiter.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.enablePprof && o.pprofAddr == "" {
		errs = append(errs, errors.New("--profiling-bind-address is required with --enable-pprof"))
	}
	if msgs := validation.IsDNS1123Label(o.kubeconfigNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--karmada-kubeconfig-namespace %q: %s", o.kubeconfigNamespace, strings.Join(msgs, "; ")))
	}
	enabled, err := EnabledControllers(o.controllers)
	if err != nil {
		errs = append(errs, err)
	}
	return enabled, errors.Join(errs...)
}

// EnabledControllers reads --controllers: "*" is every controller, "foo"
// adds foo, "-foo" removes it; an unknown name is an error.
func EnabledControllers(spec string) ([]string, error) {
	on := map[string]bool{}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case item == "*":
			for _, c := range allControllers {
				if _, set := on[c]; !set && !slices.Contains(offByDefault, c) {
					on[c] = true
				}
			}
			continue
		}
		name, disable := strings.CutPrefix(item, "-")
		if !slices.Contains(allControllers, name) {
			return nil, fmt.Errorf("--controllers: unknown controller %q; known: %s", name, strings.Join(allControllers, ", "))
		}
		on[name] = !disable
	}
	var out []string
	for _, c := range allControllers {
		if on[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// ControlPlaneConfig loads --karmada-kubeconfig (and --karmada-context).
func (o *Options) ControlPlaneConfig() (*rest.Config, error) {
	if o.karmadaKubeconfig == "" {
		return nil, errors.New("--karmada-kubeconfig is required")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.karmadaKubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: o.karmadaContext},
	).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--karmada-kubeconfig %s: %w", o.karmadaKubeconfig, err)
	}
	return cfg, nil
}

// RequiredKinds are the control plane's kinds the agent needs served.
func RequiredKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		clusterv1alpha1.GroupVersion.WithKind("Cluster"),
		workv1alpha1.GroupVersion.WithKind("Work"),
		configv1alpha1.GroupVersion.WithKind("ResourceInterpreterCustomization"),
		configv1alpha1.GroupVersion.WithKind("ResourceInterpreterWebhookConfiguration"),
	}
}

// Run runs the agent of the member reached with member against the control
// plane of --karmada-kubeconfig until ctx is done.
func Run(ctx context.Context, member *rest.Config, opts Options, logger logr.Logger) error {
	controlPlane, err := opts.ControlPlaneConfig()
	if err != nil {
		return err
	}
	return RunWithConfigs(ctx, controlPlane, member, opts, logger)
}

// RunWithConfigs runs the agent with the control plane and member
// connections given, until ctx is done.
func RunWithConfigs(ctx context.Context, controlPlane, member *rest.Config, opts Options, logger logr.Logger) error {
	enabled, err := opts.validate()
	if err != nil {
		return err
	}
	name := opts.clusterName
	logger = logger.WithValues("cluster", name)
	ctx = ctrl.LoggerInto(ctx, logger)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		workv1alpha1.AddToScheme, configv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("building scheme: %w", err)
		}
	}
	controlPlane = rest.CopyConfig(controlPlane)
	controlPlane.QPS, controlPlane.Burst = float32(opts.kubeAPIQPS), opts.kubeAPIBurst
	// Every client of the control plane presents the certificate the
	// credentials hold, so that a rotated one reaches them all.
	creds, controlPlane, err := certrotation.NewCredentials(controlPlane)
	if err != nil {
		return err
	}
	member = rest.CopyConfig(member)
	member.QPS, member.Burst = float32(opts.clusterAPIQPS), opts.clusterAPIBurst
	if member.UserAgent == "" {
		member.UserAgent = "flotilla-agent"
	}

	if err := servedkinds.Wait(ctx, controlPlane, servedkinds.Options{Kinds: RequiredKinds(), ProbeAddr: opts.probeAddr}, logger.WithName("setup")); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	direct, err := client.New(controlPlane, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating the control plane's client: %w", err)
	}
	memberClient, err := client.New(member, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating the member's client: %w", err)
	}
	if err := opts.register(ctx, direct, memberClient, member); err != nil {
		return err
	}

	cacheOpts := agentCache(name)
	// 0, Karmada's default, never resyncs (controller-runtime's own
	// default is 10 hours).
	cacheOpts.SyncPeriod = ptr.To(opts.resyncPeriod)
	var pprofAddr string
	if opts.enablePprof {
		pprofAddr = opts.pprofAddr
	}
	mgr, err := ctrl.NewManager(controlPlane, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 logger,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: opts.metricsAddr},
		HealthProbeBindAddress: opts.probeAddr,
		PprofBindAddress:       pprofAddr,
		Controller: config.Controller{
			SkipNameValidation: ptr.To(opts.Restartable),
			CacheSyncTimeout:   opts.clusterCacheSyncTimeout,
		},
		LeaderElection:   opts.leaderElect,
		LeaderElectionID: "karmada-agent-" + name,
		// In the member: the agent's replicas run there.
		LeaderElectionConfig:          member,
		LeaderElectionNamespace:       opts.leaderElectNamespace,
		LeaseDuration:                 &opts.leaseDuration,
		RenewDeadline:                 &opts.renewDeadline,
		RetryPeriod:                   &opts.retryPeriod,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	members := membercluster.NewClientCache(mgr.GetClient(), nil, membercluster.Options{
		QPS: float32(opts.clusterAPIQPS), Burst: opts.clusterAPIBurst, UserAgent: "flotilla-agent",
	})
	members.SetLocal(name, member)
	informers := membercluster.NewInformerManager(members, logger.WithName("member-informers"))
	interp, err := interpreter.New(ctx, interpreter.Options{Informers: mgr.GetCache()})
	if err != nil {
		return fmt.Errorf("building the resource interpreter: %w", err)
	}
	recorders, err := eventrecorder.New(controlPlane, scheme, eventrecorder.Options{QPS: float32(opts.eventQPS), Burst: opts.eventBurst})
	if err != nil {
		return err
	}
	renewer := &lease.Renewer{
		Client:        direct,
		ClusterName:   name,
		Duration:      opts.clusterLeaseDuration,
		RenewInterval: time.Duration(float64(opts.clusterLeaseDuration) * opts.clusterLeaseFraction),
	}
	for _, r := range []manager.Runnable{informers, recorders, renewer} {
		if err := mgr.Add(r); err != nil {
			return fmt.Errorf("adding %T: %w", r, err)
		}
	}

	reapply := make(chan event.GenericEvent, 256)
	setups := map[string]func(ctrl.Manager) error{
		ControllerClusterStatus: (&clusterstatus.Reconciler{
			SyncMode:                clusterv1alpha1.Pull,
			Client:                  mgr.GetClient(),
			Members:                 members,
			Informers:               informers,
			Period:                  opts.clusterStatusPeriod,
			MaxConcurrentReconciles: opts.concurrentClusterSyncs,
			Thresholds:              clusterstatus.Thresholds{Success: opts.clusterSuccessThreshold, Failure: opts.clusterFailureThreshold},
			SkipResourceModeling:    !opts.resourceModeling,
			RateLimiter:             ratelimiter.New[reconcile.Request](opts.rateLimiter),
		}).SetupWithManager,
		ControllerExecution: (&execution.Reconciler{
			SyncMode:                clusterv1alpha1.Pull,
			Client:                  mgr.GetClient(),
			Recorder:                recorders.NewRecorder(execution.ControllerName),
			Members:                 members,
			Informers:               informers,
			Interpreter:             interp,
			Reapply:                 reapply,
			MaxConcurrentReconciles: opts.concurrentWorkSyncs,
			RateLimiter:             ratelimiter.New[reconcile.Request](opts.rateLimiter),
		}).SetupWithManager,
		ControllerWorkStatus: (&workstatus.Reconciler{
			SyncMode:                clusterv1alpha1.Pull,
			Client:                  mgr.GetClient(),
			Recorder:                recorders.NewRecorder(workstatus.ControllerName),
			Members:                 members,
			Informers:               informers,
			Interpreter:             interp,
			Reapply:                 reapply,
			MaxConcurrentReconciles: opts.concurrentStatusSyncs,
			RateLimiter:             ratelimiter.New[reconcile.Request](opts.rateLimiter),
		}).SetupWithManager,
	}
	setups[ControllerCertRotation] = func(mgr ctrl.Manager) error {
		if creds == nil {
			logger.Info("The control plane's kubeconfig has no client certificate; nothing to rotate")
			return nil
		}
		return mgr.Add(&certrotation.Rotator{
			ClusterName: name, Credentials: creds, ControlPlane: controlPlane, Member: memberClient,
			SecretNamespace: opts.kubeconfigNamespace,
			Interval:        opts.certRotationInterval, Threshold: opts.certRotationThreshold,
		})
	}
	for _, c := range enabled {
		if err := setups[c](mgr); err != nil {
			return fmt.Errorf("setting up %s: %w", c, err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding readiness check: %w", err)
	}
	logger.WithName("setup").Info("Starting agent", "controllers", enabled)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	return nil
}

// agentCache is the controller-manager's cache (Works deflated, no managed
// fields) cut to what the agent of cluster sees: its own Cluster and the
// Works of its execution namespace, which is also all its RBAC allows. The
// entries are keyed by pointer, so the Work entry is found by its type.
func agentCache(cluster string) cache.Options {
	opts := workcache.Options()
	byObject := map[client.Object]cache.ByObject{}
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*workv1alpha1.Work); ok {
			by.Namespaces = map[string]cache.Config{names.ExecutionSpace(cluster): {}}
		}
		byObject[obj] = by
	}
	byObject[&clusterv1alpha1.Cluster{}] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", cluster)}
	opts.ByObject = byObject
	return opts
}

// register registers the member in Pull mode, with the credentials
// --report-secrets names: as karmada-agent, the member's ServiceAccounts
// for them (in --cluster-namespace), their tokens in the control plane's
// Secrets <cluster> and <cluster>-impersonator beside the Lease, owned by
// the Cluster, and the Cluster's references to them.
func (o *Options) register(ctx context.Context, controlPlane, memberClient client.Client, member *rest.Config) error {
	spec, err := o.registrationSpec(ctx, memberClient, member)
	if err != nil {
		return err
	}
	// Nothing is written for a Cluster the agent may not serve: the
	// Secrets would replace another member's.
	if err := registration.Precheck(ctx, controlPlane, spec); err != nil {
		return err
	}
	which, err := ReportedSecrets(o.reportSecrets)
	if err != nil {
		return err
	}
	if which != (join.Secrets{}) {
		access := join.Options{ClusterName: o.clusterName, ClusterNamespace: o.clusterNamespace, APIEndpoint: spec.APIEndpoint}
		creds, err := join.GrantSecrets(ctx, memberClient, access, which)
		if err != nil {
			return fmt.Errorf("--report-secrets: %w", err)
		}
		// The CA the member's token controller hands out with the token,
		// else the one the agent trusts the member with.
		access.CAData = creds.CAData
		if len(access.CAData) == 0 {
			access.CAData = member.CAData
		}
		if spec.SecretRef, spec.ImpersonatorSecretRef, err = join.WriteSecrets(ctx, controlPlane, creds, access, which); err != nil {
			return fmt.Errorf("--report-secrets: %w", err)
		}
	}
	cluster, err := registration.Ensure(ctx, controlPlane, spec)
	if err != nil {
		return err
	}
	return join.OwnSecrets(ctx, controlPlane, cluster, spec.SecretRef, spec.ImpersonatorSecretRef)
}

// registrationSpec is what the agent registers of its member.
func (o *Options) registrationSpec(ctx context.Context, memberClient client.Client, member *rest.Config) (registration.Spec, error) {
	// Karmada's cluster id: the uid of the member's kube-system, as join
	// takes it for Push members.
	id, err := join.MemberID(ctx, memberClient)
	if err != nil {
		return registration.Spec{}, err
	}
	endpoint := o.clusterAPIEndpoint
	if endpoint == "" {
		endpoint = member.Host
	}
	var zones []string
	for z := range strings.SplitSeq(o.clusterZones, ",") {
		if z = strings.TrimSpace(z); z != "" {
			zones = append(zones, z)
		}
	}
	return registration.Spec{Name: o.clusterName, ID: id, APIEndpoint: endpoint, Provider: o.clusterProvider, Region: o.clusterRegion, Zones: zones,
		ProxyURL: o.proxyServerAddress}, nil
}
