// Package app is the admission webhook as a library: its flags and Run,
// used by cmd/main.go and by anything that runs the webhook in-process (the
// local federation behind flotillactl local up and the e2e suites).
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/webhook/internal/binding"
	"github.com/flotilla-io/flotilla/components/webhook/internal/clustertaintpolicy"
	"github.com/flotilla-io/flotilla/components/webhook/internal/conversion"
	"github.com/flotilla-io/flotilla/components/webhook/internal/cronfederatedhpa"
	"github.com/flotilla-io/flotilla/components/webhook/internal/deletionprotection"
	"github.com/flotilla-io/flotilla/components/webhook/internal/federatedhpa"
	"github.com/flotilla-io/flotilla/components/webhook/internal/interpreterconfig"
	"github.com/flotilla-io/flotilla/components/webhook/internal/multiclusteringress"
	"github.com/flotilla-io/flotilla/components/webhook/internal/multiclusterservice"
	"github.com/flotilla-io/flotilla/components/webhook/internal/overridepolicy"
	"github.com/flotilla-io/flotilla/components/webhook/internal/propagationpolicy"
	"github.com/flotilla-io/flotilla/components/webhook/internal/resourcequota"
	"github.com/flotilla-io/flotilla/components/webhook/internal/work"
	"github.com/flotilla-io/flotilla/internal/features"
	"github.com/flotilla-io/flotilla/lua"
)

// Serving certificate file names in --cert-dir, as a kubernetes.io/tls
// Secret mounted there provides them.
const (
	DefaultCertName = "tls.crt"
	DefaultKeyName  = "tls.key"
)

// Options are the webhook's settings, set through BindFlags. Names follow
// karmada-webhook's where the meaning is the same.
type Options struct {
	bindAddress   string
	securePort    int
	certDir       string
	certName      string
	keyName       string
	tlsMinVersion string
	metricsAddr   string
	probeAddr     string
	kubeAPIQPS    float64
	kubeAPIBurst  int

	notReadyTolerationSeconds    int64
	unreachableTolerationSeconds int64
	quotaEnforcement             bool
	allowNoExecuteTaintPolicy    bool
	gracefulShutdown             time.Duration
	gates                        *features.Gates
}

// BindFlags registers the flags on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.bindAddress, "bind-address", "0.0.0.0", "Address the webhook server listens on.")
	fs.IntVar(&o.securePort, "secure-port", 8443, "Port the webhook server serves HTTPS on.")
	fs.StringVar(&o.certDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "Directory of the serving certificate and key (a mounted kubernetes.io/tls Secret); both are reloaded when the files change.")
	fs.StringVar(&o.certName, "tls-cert-file-name", DefaultCertName, "Serving certificate file in --cert-dir.")
	fs.StringVar(&o.keyName, "tls-private-key-file-name", DefaultKeyName, "Serving private key file in --cert-dir.")
	fs.StringVar(&o.tlsMinVersion, "tls-min-version", "1.2", "Lowest TLS version served: 1.2 or 1.3.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", `Address of the metrics endpoint; "0" disables it.`)
	// karmada-webhook's port: apart from the controller-manager's and the
	// scheduler's, so that several components run on one host.
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8000", `Address of /healthz and /readyz; "0" disables them.`)
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 40, "Requests per second to the control plane's API server.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 60, "Burst of requests to the control plane's API server.")
	fs.Int64Var(&o.notReadyTolerationSeconds, "default-not-ready-toleration-seconds", propagationpolicy.DefaultTolerationSeconds,
		"tolerationSeconds of the cluster.karmada.io/not-ready:NoExecute toleration added to every propagation policy that has none.")
	fs.Int64Var(&o.unreachableTolerationSeconds, "default-unreachable-toleration-seconds", propagationpolicy.DefaultTolerationSeconds,
		"tolerationSeconds of the cluster.karmada.io/unreachable:NoExecute toleration added to every propagation policy that has none.")
	fs.BoolVar(&o.allowNoExecuteTaintPolicy, "allow-no-execute-taint-policy", false,
		"Allow ClusterTaintPolicies with NoExecute taints, which evict the workloads that do not tolerate them.")
	fs.BoolVar(&o.quotaEnforcement, "enable-federated-quota-enforcement", false,
		"Refuse ResourceBindings whose scheduled replicas would exceed a FederatedResourceQuota; the same as --feature-gates=FederatedQuotaEnforcement=true.")
	o.gates = features.New()
	o.gates.BindFlag(fs)
	fs.DurationVar(&o.gracefulShutdown, "graceful-shutdown-timeout", 30*time.Second, "How long requests in flight may take to finish on shutdown.")
}

// ParseOptions returns the options that args give, every other flag at its
// default.
func ParseOptions(args ...string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("webhook options: %w", err)
	}
	return o, o.validate()
}

// enforceQuotas is Karmada's FederatedQuotaEnforcement gate, or the flag
// that turned it on before the webhook had feature gates.
func (o *Options) enforceQuotas() bool {
	return o.quotaEnforcement || (o.gates != nil && o.gates.Enabled(features.FederatedQuotaEnforcement))
}

func (o *Options) validate() error {
	var errs []error
	if o.securePort < 1 || o.securePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port must be between 1 and 65535, got %d", o.securePort))
	}
	if o.certDir == "" {
		errs = append(errs, errors.New("--cert-dir is required"))
	}
	if _, err := tlsVersion(o.tlsMinVersion); err != nil {
		errs = append(errs, err)
	}
	if o.kubeAPIQPS <= 0 || o.kubeAPIBurst <= 0 {
		errs = append(errs, errors.New("--kube-api-qps and --kube-api-burst must be positive"))
	}
	return errors.Join(errs...)
}

func tlsVersion(v string) (uint16, error) {
	switch v {
	case "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("--tls-min-version must be 1.2 or 1.3, got %q", v)
}

// Scheme knows every type the webhook decodes.
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha1.AddToScheme, workv1alpha2.AddToScheme, configv1alpha1.AddToScheme,
		autoscalingv1alpha1.AddToScheme, networkingv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building scheme: %w", err)
		}
	}
	return scheme, nil
}

// Handlers are what the endpoints need besides the request.
type Handlers struct {
	Decoder admission.Decoder
	// Reader lists the objects some validations compare with (other
	// ClusterTaintPolicies, ResourceInterpreterCustomizations,
	// FederatedResourceQuotas); the manager's cache in Run.
	Reader client.Reader
	// VM loads ResourceInterpreterCustomizations' scripts.
	VM                           *lua.VM
	NotReadyTolerationSeconds    int64
	UnreachableTolerationSeconds int64
	QuotaEnforcement             bool
	AllowNoExecuteTaintPolicy    bool
}

// The configurations carry Karmada's names; their webhooks come from the
// markers next to each handler.
// +kubebuilder:webhookconfiguration:mutating=true,name=mutating-config
// +kubebuilder:webhookconfiguration:mutating=false,name=validating-config

// Endpoints maps each path served to its handler, with Karmada's paths.
func Endpoints(h Handlers) map[string]http.Handler {
	defaults := propagationpolicy.Defaults{
		NotReadyTolerationSeconds:    h.NotReadyTolerationSeconds,
		UnreachableTolerationSeconds: h.UnreachableTolerationSeconds,
	}
	d := h.Decoder
	admit := func(handler admission.Handler) http.Handler { return &webhook.Admission{Handler: handler} }
	return map[string]http.Handler{
		"/mutate-propagationpolicy":                         admit(propagationpolicy.NewPropagationPolicyDefaulter(d, defaults)),
		"/validate-propagationpolicy":                       admit(propagationpolicy.NewPropagationPolicyValidator(d)),
		"/mutate-clusterpropagationpolicy":                  admit(propagationpolicy.NewClusterPropagationPolicyDefaulter(d, defaults)),
		"/validate-clusterpropagationpolicy":                admit(propagationpolicy.NewClusterPropagationPolicyValidator(d)),
		"/mutate-overridepolicy":                            admit(overridepolicy.NewDefaulter(d)),
		"/validate-overridepolicy":                          admit(overridepolicy.NewValidator(d)),
		"/validate-clusteroverridepolicy":                   admit(overridepolicy.NewClusterValidator(d)),
		"/mutate-resourcebinding":                           admit(binding.NewResourceBindingDefaulter(d)),
		"/validate-resourcebinding":                         admit(binding.NewQuotaValidator(d, h.Reader, h.QuotaEnforcement)),
		"/mutate-clusterresourcebinding":                    admit(binding.NewClusterResourceBindingDefaulter(d)),
		"/mutate-work":                                      admit(work.NewDefaulter(d)),
		"/validate-clustertaintpolicy":                      admit(clustertaintpolicy.NewValidator(d, h.Reader, h.AllowNoExecuteTaintPolicy)),
		"/validate-resourceinterpretercustomization":        admit(interpreterconfig.NewCustomizationValidator(d, h.Reader, h.VM)),
		"/validate-resourceinterpreterwebhookconfiguration": admit(interpreterconfig.NewWebhookConfigurationValidator(d)),
		"/validate-federatedresourcequota":                  admit(resourcequota.NewValidator(d)),
		"/validate-resourcedeletionprotection":              admit(deletionprotection.NewValidator()),
		"/mutate-federatedhpa":                              admit(federatedhpa.NewDefaulter(d)),
		"/validate-federatedhpa":                            admit(federatedhpa.NewValidator(d)),
		"/validate-cronfederatedhpa":                        admit(cronfederatedhpa.NewValidator(d)),
		"/mutate-multiclusterservice":                       admit(multiclusterservice.NewDefaulter(d)),
		"/validate-multiclusterservice":                     admit(multiclusterservice.NewValidator(d)),
		"/validate-multiclusteringress":                     admit(multiclusteringress.NewValidator(d)),
		conversion.Path:                                     conversion.NewHandler(),
	}
}

// The webhook reads the kinds some validations compare with.
// +kubebuilder:rbac:groups=policy.karmada.io,resources=clustertaintpolicies;federatedresourcequotas,verbs=get;list;watch
// +kubebuilder:rbac:groups=config.karmada.io,resources=resourceinterpretercustomizations,verbs=get;list;watch

// Run serves the webhook until ctx is done, then stops accepting requests
// and lets those in flight finish within --graceful-shutdown-timeout.
func Run(ctx context.Context, cfg *rest.Config, opts Options, logger logr.Logger) error {
	if err := opts.validate(); err != nil {
		return err
	}
	minTLS, _ := tlsVersion(opts.tlsMinVersion)
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(opts.kubeAPIQPS), opts.kubeAPIBurst
	server := webhook.NewServer(webhook.Options{
		Host:     opts.bindAddress,
		Port:     opts.securePort,
		CertDir:  opts.certDir,
		CertName: opts.certName,
		KeyName:  opts.keyName,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = minTLS
			// HTTP/1.1 only: the API server calls webhooks over it anyway,
			// and it keeps HTTP/2 stream floods out.
			c.NextProtos = []string{"http/1.1"}
		}},
	})
	gracefulShutdown := opts.gracefulShutdown
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Logger:                  logger,
		WebhookServer:           server,
		Metrics:                 metricsserver.Options{BindAddress: opts.metricsAddr},
		HealthProbeBindAddress:  opts.probeAddr,
		GracefulShutdownTimeout: &gracefulShutdown,
		// Only the few kinds validations compare with are cached, without
		// managed fields.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
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
	// The manager runs its webhook server once asked for it.
	server = mgr.GetWebhookServer()
	// Ready once the HTTPS server accepts connections with its certificate.
	if err := mgr.AddReadyzCheck("webhook", server.StartedChecker()); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}

	// The kinds validations compare with are watched from the start, so
	// that the first request does not wait for a cache to fill; ready once
	// they are synced too.
	for _, obj := range []client.Object{&policyv1alpha1.ClusterTaintPolicy{}, &policyv1alpha1.FederatedResourceQuota{},
		&configv1alpha1.ResourceInterpreterCustomization{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
	}
	if err := mgr.AddReadyzCheck("caches", func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("caches not synced")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}

	vm := lua.New()
	defer vm.Close()
	for path, handler := range Endpoints(Handlers{
		Decoder:                      admission.NewDecoder(scheme),
		Reader:                       mgr.GetClient(),
		VM:                           vm,
		NotReadyTolerationSeconds:    opts.notReadyTolerationSeconds,
		UnreachableTolerationSeconds: opts.unreachableTolerationSeconds,
		QuotaEnforcement:             opts.enforceQuotas(),
		AllowNoExecuteTaintPolicy:    opts.allowNoExecuteTaintPolicy,
	}) {
		server.Register(path, handler)
	}
	logger.Info("Starting webhook", "address", fmt.Sprintf("%s:%d", opts.bindAddress, opts.securePort), "certDir", opts.certDir)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
