package membercluster

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Clients talk to one member cluster. They share one HTTP client, hence one
// connection pool and one rate limiter per member.
type Clients struct {
	// ClusterName is the name of the Cluster object.
	ClusterName string
	// Config is the connection; copy it with rest.CopyConfig before changing it.
	Config *rest.Config
	// HTTPClient is shared by the clients below.
	HTTPClient *http.Client
	// Kube is the typed clientset.
	Kube kubernetes.Interface
	// Dynamic reaches any resource as unstructured objects.
	Dynamic dynamic.Interface
	// Discovery lists the member's APIs and version.
	Discovery *discovery.DiscoveryClient
	// Client is a controller-runtime client (no cache) with the scheme of
	// ClientCache's options.
	Client client.Client

	key connectionKey
}

// connectionKey is everything a member's clients are built from. Clients are
// rebuilt when it changes: the Cluster was recreated (new uid), its endpoint,
// TLS or proxy settings changed, or its Secret changed (new resourceVersion,
// as when the token is rotated).
type connectionKey struct {
	uid                   types.UID
	endpoint              string
	insecureSkipTLSVerify bool
	proxyURL              string
	proxyHeader           string
	secretNamespace       string
	secretName            string
	secretResourceVersion string
}

// keyOf derives the connection key; secret may be nil when the cluster names
// none.
func keyOf(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) connectionKey {
	k := connectionKey{
		uid:                   cluster.UID,
		endpoint:              cluster.Spec.APIEndpoint,
		insecureSkipTLSVerify: cluster.Spec.InsecureSkipTLSVerification,
		proxyURL:              cluster.Spec.ProxyURL,
	}
	if len(cluster.Spec.ProxyHeader) > 0 {
		// A canonical string keeps the key comparable with ==.
		var b strings.Builder
		for _, name := range slices.Sorted(maps.Keys(cluster.Spec.ProxyHeader)) {
			fmt.Fprintf(&b, "%q=%q;", name, cluster.Spec.ProxyHeader[name])
		}
		k.proxyHeader = b.String()
	}
	if secret != nil {
		k.secretNamespace, k.secretName, k.secretResourceVersion = secret.Namespace, secret.Name, secret.ResourceVersion
	}
	return k
}

// ClientCache hands out the clients of member clusters, built from the Cluster
// objects and Secrets it reads from the control plane, and keeps them until
// the connection they were built from changes. It is safe for concurrent use.
type ClientCache struct {
	reader client.Reader
	opts   Options
	scheme *runtime.Scheme

	mu      sync.Mutex
	members map[string]*Clients
	// local are the members reached with a configuration of their own
	// rather than through their Cluster and Secret (SetLocal).
	local map[string]*rest.Config
}

// NewClientCache reads Clusters and Secrets through reader (typically the
// manager's cached client, so that lookups are cheap). scheme is used by the
// controller-runtime clients; nil means client-go's built-in types.
func NewClientCache(reader client.Reader, scheme *runtime.Scheme, opts Options) *ClientCache {
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	return &ClientCache{reader: reader, scheme: scheme, opts: opts.withDefaults(), members: map[string]*Clients{}, local: map[string]*rest.Config{}}
}

// SetLocal has the clients of the member clusterName built from cfg, not
// from its Cluster and Secret: an agent reaches the member it runs in this
// way, whatever the Cluster's sync mode and secretRef say. cfg's QPS and
// Burst are kept when set.
func (c *ClientCache) SetLocal(clusterName string, cfg *rest.Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.local[clusterName] = rest.CopyConfig(cfg)
	delete(c.members, clusterName)
}

// Get returns the clients of the named member cluster, reading its Cluster
// first. A Cluster that is gone is forgotten and the NotFound error returned.
func (c *ClientCache) Get(ctx context.Context, clusterName string) (*Clients, error) {
	var cluster clusterv1alpha1.Cluster
	if err := c.reader.Get(ctx, client.ObjectKey{Name: clusterName}, &cluster); err != nil {
		if client.IgnoreNotFound(err) == nil {
			c.Forget(clusterName)
		}
		return nil, fmt.Errorf("getting Cluster %s: %w", clusterName, err)
	}
	return c.ForCluster(ctx, &cluster)
}

// ForCluster returns the clients of cluster, an object the caller has just
// read, building them if the cached ones are stale.
func (c *ClientCache) ForCluster(ctx context.Context, cluster *clusterv1alpha1.Cluster) (*Clients, error) {
	c.mu.Lock()
	local, isLocal := c.local[cluster.Name]
	c.mu.Unlock()
	if isLocal {
		return c.forLocal(cluster, local)
	}
	secret, err := c.secretOf(ctx, cluster)
	if err != nil {
		return nil, fmt.Errorf("clients of cluster %s: %w", cluster.Name, err)
	}
	key := keyOf(cluster, secret)

	c.mu.Lock()
	defer c.mu.Unlock()
	if cached, ok := c.members[cluster.Name]; ok && cached.key == key {
		return cached, nil
	}
	built, err := c.build(cluster, secret, key)
	if err != nil {
		return nil, fmt.Errorf("clients of cluster %s: %w", cluster.Name, err)
	}
	if old, ok := c.members[cluster.Name]; ok {
		old.HTTPClient.CloseIdleConnections()
	}
	c.members[cluster.Name] = built
	return built, nil
}

// Forget drops the cached clients of a member, as when its Cluster is deleted.
func (c *ClientCache) Forget(clusterName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.members[clusterName]; ok {
		old.HTTPClient.CloseIdleConnections()
		delete(c.members, clusterName)
	}
}

// Cached reports whether clients of the member are cached, for tests and
// debugging.
func (c *ClientCache) Cached(clusterName string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.members[clusterName]
	return ok
}

// secretOf reads the credentials Secret of a Push cluster.
func (c *ClientCache) secretOf(ctx context.Context, cluster *clusterv1alpha1.Cluster) (*corev1.Secret, error) {
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		return nil, ErrPullMode
	}
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil, ErrNoSecretRef
	}
	var secret corev1.Secret
	if err := c.reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &secret); err != nil {
		return nil, fmt.Errorf("getting Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return &secret, nil
}

// forLocal returns the clients of a member set with SetLocal, built once per
// Cluster object.
func (c *ClientCache) forLocal(cluster *clusterv1alpha1.Cluster, cfg *rest.Config) (*Clients, error) {
	key := connectionKey{uid: cluster.UID, endpoint: cfg.Host}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cached, ok := c.members[cluster.Name]; ok && cached.key == key {
		return cached, nil
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS <= 0 {
		cfg.QPS, cfg.Burst = c.opts.QPS, c.opts.Burst
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = c.opts.UserAgent
	}
	built, err := c.fromConfig(cluster.Name, cfg, key)
	if err != nil {
		return nil, fmt.Errorf("clients of cluster %s: %w", cluster.Name, err)
	}
	if old, ok := c.members[cluster.Name]; ok {
		old.HTTPClient.CloseIdleConnections()
	}
	c.members[cluster.Name] = built
	return built, nil
}

func (c *ClientCache) build(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret, key connectionKey) (*Clients, error) {
	cfg, err := restConfig(cluster, secret, c.opts)
	if err != nil {
		return nil, err
	}
	return c.fromConfig(cluster.Name, cfg, key)
}

func (c *ClientCache) fromConfig(clusterName string, cfg *rest.Config, key connectionKey) (*Clients, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building HTTP client: %w", err)
	}
	kube, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building clientset: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building discovery client: %w", err)
	}
	// client.New maps kinds to resources lazily, so building it makes no
	// request to a member that may be down.
	crClient, err := client.New(cfg, client.Options{HTTPClient: httpClient, Scheme: c.scheme})
	if err != nil {
		return nil, fmt.Errorf("building controller-runtime client: %w", err)
	}
	return &Clients{
		ClusterName: clusterName,
		Config:      cfg,
		HTTPClient:  httpClient,
		Kube:        kube,
		Dynamic:     dyn,
		Discovery:   disco,
		Client:      crClient,
		key:         key,
	}, nil
}

// SyncModeOf is the cluster's spec.syncMode, Push when unset: the
// controllers that execute Works and collect status serve one mode each,
// the controller-manager's Push and an agent's Pull.
func SyncModeOf(cluster *clusterv1alpha1.Cluster) clusterv1alpha1.ClusterSyncMode {
	if cluster.Spec.SyncMode == "" {
		return clusterv1alpha1.Push
	}
	return cluster.Spec.SyncMode
}
