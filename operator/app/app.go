// Package app runs the Flotilla operator: a manager with the Karmada
// reconciler, its caches limited to what the operator made.
package app

import (
	"context"
	"flag"
	"fmt"
	"net"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/operator/charts"
	"github.com/flotilla-io/flotilla/operator/internal/controller/karmada"
	"github.com/flotilla-io/flotilla/operator/internal/helmrelease"
	"github.com/flotilla-io/flotilla/operator/versions"
)

// Options configure the operator.
type Options struct {
	MetricsAddr          string
	ProbeAddr            string
	LeaderElect          bool
	LeaderElectNamespace string
	// WatchNamespace limits the operator to one namespace; empty: all.
	WatchNamespace string
	Concurrency    int

	// Versions is the version table; zero: the one built in.
	Versions *versions.Table
	// Dial opens connections to the instances' API servers; nil: the
	// default dialer. Tests whose host cluster has no cluster network set it.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Now is the clock certificates are issued and renewed by; nil:
	// time.Now. Tests move it forward to see renewals.
	Now func() time.Time
}

// BindFlags registers the operator's flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", `Address of the metrics endpoint; "0" disables it.`)
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address of the health and readiness probes.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "Elect a leader, so that only one of several replicas reconciles.")
	fs.StringVar(&o.LeaderElectNamespace, "leader-elect-resource-namespace", "", "Namespace of the leader election lease; default: the operator's own.")
	fs.StringVar(&o.WatchNamespace, "watch-namespace", "", "Reconcile Karmadas of this namespace only; default: every namespace.")
	fs.IntVar(&o.Concurrency, "concurrent-karmada-syncs", 4, "Karmadas reconciled at once.")
}

// Scheme is the operator's view of its host cluster.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, operatorv1alpha1.AddToScheme, cmv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// NewManager builds the operator's manager on a host cluster.
func NewManager(cfg *rest.Config, opts Options, logger logr.Logger) (ctrl.Manager, error) {
	if opts.Concurrency < 1 {
		return nil, fmt.Errorf("--concurrent-karmada-syncs must be at least 1, got %d", opts.Concurrency)
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	table := opts.Versions
	if table == nil {
		t, err := versions.Builtin()
		if err != nil {
			return nil, err
		}
		table = &t
	}
	owned, err := labels.NewRequirement(operatorv1alpha1.LabelKarmadaName, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	byObject := map[client.Object]cache.ByObject{}
	for _, obj := range karmada.CachedObjects() {
		byObject[obj] = cache.ByObject{Label: labels.NewSelector().Add(*owned)}
	}
	cacheOpts := cache.Options{ByObject: byObject}
	if opts.WatchNamespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{opts.WatchNamespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Logger:                  logger,
		Cache:                   cacheOpts,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.ProbeAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        "flotilla-operator.operator.karmada.io",
		LeaderElectionNamespace: opts.LeaderElectNamespace,
		// One Karmada controller runs per process; the check only guards
		// metrics against a second one, which tests that restart the
		// operator as a newer version in one process do start.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	r := &karmada.Reconciler{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		Recorder:      mgr.GetEventRecorder("flotilla-operator"),
		Helm:          helmrelease.New(cfg, logger.WithName("helm")),
		Versions:      *table,
		Charts:        charts.Load,
		ControlPlanes: &karmada.ControlPlanes{Dial: opts.Dial},
		Now:           opts.Now,
	}
	if err := r.SetupWithManager(mgr, opts.Concurrency); err != nil {
		return nil, fmt.Errorf("setting up the Karmada controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// Run runs the operator until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options, logger logr.Logger) error {
	mgr, err := NewManager(cfg, opts, logger)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
