// Package app is the metrics adapter as a library: its options and Run,
// used by cmd/main.go and by whatever runs it in-process (the local
// federation, the tests).
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	cmapiserver "sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver"
	cmoptions "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd/options"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/components/metrics-adapter/internal/custommetrics"
	"github.com/flotilla-io/flotilla/components/metrics-adapter/internal/members"
	"github.com/flotilla-io/flotilla/components/metrics-adapter/internal/openapi"
	"github.com/flotilla-io/flotilla/components/metrics-adapter/internal/resourcemetrics"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/release"
)

// Name is the server's name in its logs, as Karmada's component is named.
const Name = "karmada-metrics-adapter"

// Options are karmada-metrics-adapter's settings: the custom metrics
// adapter's serving, delegated authentication and authorization, audit and
// feature options, --kubeconfig of the control plane, and the client
// limits towards it and towards the members.
type Options struct {
	Server *cmoptions.CustomMetricsAdapterServerOptions
	// KubeConfig is the control plane's kubeconfig (--kubeconfig); empty
	// means in-cluster. Config, when set, is used instead.
	KubeConfig string
	Config     *rest.Config

	KubeAPIQPS      float32
	KubeAPIBurst    int
	ClusterAPIQPS   float32
	ClusterAPIBurst int

	// ShutdownTimeout bounds how long requests in flight may take once
	// ctx ends; zero is the generic API server's default.
	ShutdownTimeout time.Duration
}

// NewOptions returns the options at Karmada's defaults.
func NewOptions() *Options {
	o := &Options{
		Server:          cmoptions.NewCustomMetricsAdapterServerOptions(),
		KubeAPIQPS:      40,
		KubeAPIBurst:    60,
		ClusterAPIQPS:   membercluster.DefaultQPS,
		ClusterAPIBurst: membercluster.DefaultBurst,
	}
	o.Server.SecureServing.BindPort = 443
	return o
}

// AddFlags registers the flags on fs, with Karmada's names.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Server.AddFlags(fs)
	fs.StringVar(&o.KubeConfig, "kubeconfig", o.KubeConfig, "Path to the control plane's kubeconfig file.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "QPS to use while talking with the control plane's API server.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst to use while talking with the control plane's API server.")
	fs.Float32Var(&o.ClusterAPIQPS, "cluster-api-qps", o.ClusterAPIQPS, "QPS to use while talking with each member cluster's API server.")
	fs.IntVar(&o.ClusterAPIBurst, "cluster-api-burst", o.ClusterAPIBurst, "Burst to use while talking with each member cluster's API server.")
}

// Validate reports every bad option at once.
func (o *Options) Validate() error {
	errs := o.Server.Validate()
	if o.KubeAPIQPS <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps: %v must be positive", o.KubeAPIQPS))
	}
	if o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-burst: %d must be positive", o.KubeAPIBurst))
	}
	if o.ClusterAPIQPS <= 0 {
		errs = append(errs, fmt.Errorf("--cluster-api-qps: %v must be positive", o.ClusterAPIQPS))
	}
	if o.ClusterAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--cluster-api-burst: %d must be positive", o.ClusterAPIBurst))
	}
	return errors.Join(errs...)
}

// Run serves until ctx ends.
func Run(ctx context.Context, o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	cfg, err := o.controlPlaneConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("building the scheme: %w", err)
		}
	}
	// Clusters and the Secrets of their credentials are read at every
	// request, from a cache fed by watches.
	clusterCache, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating the control plane's cache: %w", err)
	}
	reader := client.Reader(clusterCache)
	clients := membercluster.NewClientCache(reader, nil, membercluster.Options{
		QPS: o.ClusterAPIQPS, Burst: o.ClusterAPIBurst, UserAgent: Name + "/" + release.Version,
	})
	memberList := members.NewClusters(reader, clients)

	server, err := o.newServer(ctx, cfg, memberList)
	if err != nil {
		return err
	}
	err = server.AddPostStartHook("start-cluster-cache", func(hookCtx genericapiserver.PostStartHookContext) error {
		go func() {
			if err := clusterCache.Start(hookCtx); err != nil {
				log.FromContext(ctx).Error(err, "The control plane's cache stopped")
			}
		}()
		if !clusterCache.WaitForCacheSync(hookCtx) {
			return errors.New("the control plane's cache never synced")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("adding the cache's start hook: %w", err)
	}
	return server.PrepareRun().RunWithContext(ctx)
}

func (o *Options) controlPlaneConfig() (*rest.Config, error) {
	var cfg *rest.Config
	if o.Config != nil {
		cfg = rest.CopyConfig(o.Config)
	} else {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", o.KubeConfig); err != nil {
			return nil, fmt.Errorf("--kubeconfig: %w", err)
		}
	}
	cfg.QPS = o.KubeAPIQPS
	cfg.Burst = o.KubeAPIBurst
	return cfg, nil
}

// newServer is a custom metrics adapter serving custom.metrics.k8s.io, with
// metrics.k8s.io installed beside it.
func (o *Options) newServer(ctx context.Context, cfg *rest.Config, memberList members.Lister) (*genericapiserver.GenericAPIServer, error) {
	recommended := genericapiserver.NewRecommendedConfig(cmapiserver.Codecs)
	recommended.ClientConfig = cfg
	metricsScheme := resourcemetrics.NewScheme()
	namer := openapinamer.NewDefinitionNamer(cmapiserver.Scheme, metricsScheme)
	recommended.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	recommended.OpenAPIConfig.Info.Title = Name
	recommended.OpenAPIConfig.Info.Version = release.Version
	recommended.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	recommended.OpenAPIV3Config.Info.Title = Name
	recommended.OpenAPIV3Config.Info.Version = release.Version
	if err := o.applyTo(recommended); err != nil {
		return nil, fmt.Errorf("applying the options: %w", err)
	}
	config := cmapiserver.Config{GenericConfig: &recommended.Config}
	adapter, err := config.Complete(nil).New(Name, custommetrics.NewProvider(ctx, memberList), nil)
	if err != nil {
		return nil, fmt.Errorf("creating the server: %w", err)
	}
	if err := resourcemetrics.Install(adapter.GenericAPIServer, metricsScheme, memberList); err != nil {
		return nil, err
	}
	if o.ShutdownTimeout > 0 {
		adapter.GenericAPIServer.ShutdownTimeout = o.ShutdownTimeout
	}
	return adapter.GenericAPIServer, nil
}

// applyTo is the custom metrics adapter's own ApplyTo, except that a
// serving certificate given in memory (SecureServing.ServerCert.
// GeneratedCert, by in-process callers) is kept rather than replaced by a
// self-signed one: a certificate file would be watched with inotify.
func (o *Options) applyTo(c *genericapiserver.RecommendedConfig) error {
	s := o.Server
	if s.SecureServing.ServerCert.GeneratedCert == nil {
		if err := s.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.IPv4(127, 0, 0, 1)}); err != nil {
			return fmt.Errorf("creating a self-signed serving certificate: %w", err)
		}
	}
	if err := s.SecureServing.ApplyTo(&c.SecureServing, &c.LoopbackClientConfig); err != nil {
		return err
	}
	if err := s.Authentication.ApplyTo(&c.Authentication, c.SecureServing, nil); err != nil {
		return err
	}
	if err := s.Authorization.ApplyTo(&c.Authorization); err != nil {
		return err
	}
	if err := s.Audit.ApplyTo(&c.Config); err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(c.ClientConfig)
	if err != nil {
		return fmt.Errorf("creating the control plane's client: %w", err)
	}
	if err := s.Features.ApplyTo(&c.Config, kube, c.SharedInformerFactory); err != nil {
		return err
	}
	c.EnableMetrics = s.EnableMetrics
	return nil
}
