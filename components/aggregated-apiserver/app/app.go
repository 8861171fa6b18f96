// Package app is the aggregated API server as a library: its options and
// Run, used by cmd/main.go and by whatever runs it in-process (the local
// federation, the tests).
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/internal/clusterapi"
	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/internal/clusterstorage"
	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/internal/openapi"
	"github.com/flotilla-io/flotilla/internal/release"
)

// DefaultEtcdPrefix is where the control plane's API server keeps its
// objects; a Cluster is read and written at the key a CRD-served Cluster
// had, <prefix>/cluster.karmada.io/clusters/<name>.
const DefaultEtcdPrefix = "/registry"

// Name is the server's name in its logs and OpenAPI document.
const Name = "karmada-aggregated-apiserver"

// Options are the server's settings: the generic API server's recommended
// options (etcd, serving, delegated authentication and authorization,
// audit, admission, features, --kubeconfig) and the client limits, as
// karmada-aggregated-apiserver's.
type Options struct {
	Recommended  *genericoptions.RecommendedOptions
	KubeAPIQPS   float32
	KubeAPIBurst int
	// ShutdownTimeout bounds how long requests in flight (watches the
	// API server proxies here among them) may take once ctx ends; zero is
	// the generic API server's default.
	ShutdownTimeout time.Duration

	scheme *runtime.Scheme
	codecs serializer.CodecFactory
}

// NewOptions returns the options at their defaults.
func NewOptions() (*Options, error) {
	scheme, err := clusterapi.NewScheme()
	if err != nil {
		return nil, err
	}
	codecs := clusterapi.NewCodecs(scheme)
	rec := genericoptions.NewRecommendedOptions(DefaultEtcdPrefix, codecs.LegacyCodec(clusterapi.GroupVersion))
	// Stored as the CRD stored it: JSON of cluster.karmada.io/v1alpha1.
	rec.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(clusterapi.GroupVersion,
		schema.GroupKind{Group: clusterapi.GroupVersion.Group})
	rec.Etcd.DefaultStorageMediaType = runtime.ContentTypeJSON
	rec.SecureServing.BindPort = 443
	return &Options{Recommended: rec, KubeAPIQPS: 40, KubeAPIBurst: 60, scheme: scheme, codecs: codecs}, nil
}

// AddFlags registers the flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Recommended.AddFlags(fs)
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "QPS to use while talking with the control plane's API server.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst to use while talking with the control plane's API server.")
}

// Validate reports every bad option at once.
func (o *Options) Validate() error {
	errs := o.Recommended.Validate()
	if o.KubeAPIQPS <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps: %v must be positive", o.KubeAPIQPS))
	}
	if o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-burst: %d must be positive", o.KubeAPIBurst))
	}
	return errors.Join(errs...)
}

// Run serves until ctx ends.
func Run(ctx context.Context, o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	server, err := o.newServer()
	if err != nil {
		return err
	}
	return server.PrepareRun().RunWithContext(ctx)
}

func (o *Options) newServer() (*genericapiserver.GenericAPIServer, error) {
	// Without serving certificates a self-signed one is made, as other
	// aggregated servers do; the APIService then needs
	// insecureSkipTLSVerify or its caBundle. One given in memory
	// (ServerCert.GeneratedCert, by in-process callers) is kept.
	if o.Recommended.SecureServing.ServerCert.GeneratedCert == nil {
		if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.IPv4(127, 0, 0, 1)}); err != nil {
			return nil, fmt.Errorf("creating a self-signed serving certificate: %w", err)
		}
	}
	cfg := genericapiserver.NewRecommendedConfig(o.codecs)
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	namer := openapinamer.NewDefinitionNamer(o.scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title = Name
	cfg.OpenAPIConfig.Info.Version = release.Version
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title = Name
	cfg.OpenAPIV3Config.Info.Version = release.Version
	if err := o.Recommended.ApplyTo(cfg); err != nil {
		return nil, fmt.Errorf("applying the options: %w", err)
	}
	// Streams through the cluster proxy (logs -f, exec, attach, watches)
	// outlive the request timeout.
	cfg.LongRunningFunc = clusterstorage.IsLongRunning
	cfg.ClientConfig.QPS = o.KubeAPIQPS
	cfg.ClientConfig.Burst = o.KubeAPIBurst
	kube, err := kubernetes.NewForConfig(cfg.ClientConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the control plane's client: %w", err)
	}
	server, err := cfg.Complete().New(Name, genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("creating the server: %w", err)
	}
	if o.ShutdownTimeout > 0 {
		server.ShutdownTimeout = o.ShutdownTimeout
	}
	storage, err := clusterstorage.NewStorage(o.scheme, cfg.RESTOptionsGetter, secrets{kube})
	if err != nil {
		return nil, err
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(clusterapi.GroupVersion.Group, o.scheme, runtime.NewParameterCodec(o.scheme), o.codecs)
	group.VersionedResourcesStorageMap[clusterapi.GroupVersion.Version] = storage.Map()
	if err := server.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("installing %s: %w", clusterapi.GroupVersion, err)
	}
	return server, nil
}

// secrets reads Secrets from the control plane at each proxied request, so
// a rotated token is used at once; proxied requests are few.
type secrets struct{ kube kubernetes.Interface }

func (s secrets) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return s.kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}
