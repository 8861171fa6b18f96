package localfed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Federation is a running local federation. Close stops it.
type Federation struct {
	// WorkDir holds every cluster's certificates and kubeconfigs, etcd's data
	// and logs/<cluster>/<component>.log. Close leaves it in place.
	WorkDir string
	// BinDir is where the Kubernetes binaries were taken from.
	BinDir string
	// KubeconfigPath is the kubeconfig with the contexts karmada-apiserver
	// (unless NoControlPlane), host (with Host) and member1 … memberN.
	KubeconfigPath string
	// ControlPlane is the karmada-apiserver; nil with Options.NoControlPlane.
	ControlPlane *Cluster
	// Host is the host cluster of Options.Host, else nil.
	Host *Cluster
	// Members are member1 … memberN, in order, the Pull members (Cluster.Pull)
	// last.
	Members []*Cluster
	// StartupTime is how long Start took.
	StartupTime time.Duration

	opts    Options
	scheme  *runtime.Scheme
	ports   *portAllocator
	sup     *supervisor
	etcdURL string
	// hostClaim holds the host's Service range (host.go).
	hostClaim net.Listener

	// membersMu serializes StopMember and StartMember; stopped holds the
	// members they stopped.
	membersMu sync.Mutex
	stopped   map[string]bool

	// webhook is the control plane's admission webhook (webhook.go).
	webhook *webhookServer
	// aggregated is the control plane's aggregated API server
	// (aggregated.go), when Options.AggregatedAPIServer.
	aggregated *aggregatedServer
	// metricsAdapter is the control plane's metrics adapter
	// (metricsadapter.go), when Options.MetricsAdapter.
	metricsAdapter *aggregatedServer
	// agents run the Pull members' agents (agent.go), by member.
	agents map[string]*agent

	closeOnce sync.Once
	closeErr  error
}

// Start brings up a federation and returns once every cluster is ready: the
// control plane serves Flotilla's CRDs, each member's nodes are Ready, its
// scheduler and controllers run, and it is registered as a Cluster. ctx bounds
// the start only; the processes run until Close. On error nothing is left
// running.
func Start(ctx context.Context, opts Options) (*Federation, error) {
	began := time.Now()
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	binDir, err := ResolveBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	if opts.Metrics {
		if err := checkMetricsServerBinary(binDir); err != nil {
			return nil, err
		}
	}
	workDir := opts.WorkDir
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "flotilla-localfed-"); err != nil {
			return nil, fmt.Errorf("creating work directory: %w", err)
		}
	} else if err := os.MkdirAll(workDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating work directory: %w", err)
	}
	if workDir, err = filepath.Abs(workDir); err != nil {
		return nil, fmt.Errorf("resolving work directory: %w", err)
	}
	kubeconfigPath := opts.KubeconfigPath
	if kubeconfigPath == "" {
		kubeconfigPath = filepath.Join(workDir, "kubeconfig")
	}
	scheme := opts.Scheme
	if scheme == nil {
		if scheme, err = defaultScheme(); err != nil {
			return nil, err
		}
	}

	f := &Federation{
		WorkDir:        workDir,
		BinDir:         binDir,
		KubeconfigPath: kubeconfigPath,
		opts:           opts,
		scheme:         scheme,
		ports:          newPortAllocator(),
		sup:            newSupervisor(filepath.Join(workDir, "logs")),
		stopped:        map[string]bool{},
		agents:         map[string]*agent{},
	}
	logger := log.FromContext(ctx).WithValues("workDir", workDir)
	ctx = log.IntoContext(ctx, logger)
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := f.start(ctx); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("starting local federation (logs in %s): %w", f.LogDir(), err)
	}
	f.StartupTime = time.Since(began)
	logger.Info("Local federation ready", "members", len(f.Members), "kubeconfig", f.KubeconfigPath, "startupTime", f.StartupTime.Round(time.Millisecond))
	return f, nil
}

func (f *Federation) start(ctx context.Context) error {
	var err error
	if !f.opts.NoControlPlane {
		if f.ControlPlane, err = newCluster(f.WorkDir, ControlPlaneName); err != nil {
			return err
		}
	}
	if f.opts.Host {
		if f.Host, err = f.newHostCluster(); err != nil {
			return err
		}
	}
	for i := 1; i <= f.opts.Members+f.opts.PullMembers; i++ {
		m, err := newCluster(f.WorkDir, MemberName(i))
		if err != nil {
			return err
		}
		m.Pull = i > f.opts.Members
		f.Members = append(f.Members, m)
	}
	if err := f.startEtcd(ctx); err != nil {
		return err
	}

	g, gctx := errgroup.WithContext(ctx)
	if f.ControlPlane != nil {
		g.Go(func() error { return f.startControlPlane(gctx, f.ControlPlane) })
	}
	if f.Host != nil {
		g.Go(func() error { return f.startHost(gctx, f.Host) })
	}
	for _, m := range f.Members {
		g.Go(func() error { return f.startMember(gctx, m) })
	}
	if err := g.Wait(); err != nil {
		return err
	}

	if f.ControlPlane != nil {
		for _, m := range f.Members {
			if m.Pull {
				continue
			}
			if err := registerMember(ctx, f.ControlPlane, m); err != nil {
				return err
			}
		}
		if err := f.startAgents(ctx); err != nil {
			return err
		}
		if f.opts.MetricsAdapter {
			if f.metricsAdapter, err = f.startMetricsAdapter(ctx, f.ControlPlane); err != nil {
				return err
			}
		}
	}
	return writeKubeconfig(f.KubeconfigPath, f.clusters())
}

// startControlPlane runs the karmada-apiserver with a kube-controller-manager
// limited to the controllers a Karmada control plane has, and installs
// Flotilla's CRDs and namespaces, and the administrator's right to proxy.
func (f *Federation) startControlPlane(ctx context.Context, c *Cluster) error {
	began := time.Now()
	if err := f.startAPIServer(ctx, c); err != nil {
		return err
	}
	if err := c.writeComponentKubeconfigs(binKubeControllerManager); err != nil {
		return err
	}
	kcm, err := f.startControllerManager(ctx, c, controlPlaneControllers)
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, c); err != nil {
		return err
	}
	if err := createNamespaces(ctx, c, NamespaceSystem, NamespaceCluster); err != nil {
		return err
	}
	if err := allowProxyAdmin(ctx, c); err != nil {
		return err
	}
	if f.webhook, err = f.startWebhook(ctx, c); err != nil {
		return err
	}
	if f.opts.AggregatedAPIServer {
		if f.aggregated, err = f.startAggregatedAPIServer(ctx, c); err != nil {
			return err
		}
	}
	if err := waitFor(ctx, c.Name+" kube-controller-manager", defaultServiceAccountExists(c), c.apiserver, kcm); err != nil {
		return err
	}
	log.FromContext(ctx).V(1).Info("Control plane ready", "cluster", c.Name, "endpoint", c.Endpoint, "elapsed", time.Since(began).Round(time.Millisecond))
	return nil
}

// startMember runs a member: API server, controller manager, scheduler and
// kwok with its nodes, and gives the control plane a token for it.
func (f *Federation) startMember(ctx context.Context, c *Cluster) error {
	began := time.Now()
	if !f.opts.APIServerOnlyMembers {
		if err := f.prepareKubelet(c); err != nil {
			return err
		}
	}
	if err := f.startAPIServer(ctx, c); err != nil {
		return err
	}
	if f.opts.APIServerOnlyMembers {
		return grantControlPlaneAccess(ctx, c)
	}
	if err := c.writeComponentKubeconfigs(binKubeControllerManager, binKubeScheduler, binKwok); err != nil {
		return err
	}
	if err := f.startMemberComponents(ctx, c, true); err != nil {
		return err
	}
	log.FromContext(ctx).V(1).Info("Member ready", "cluster", c.Name, "endpoint", c.Endpoint, "elapsed", time.Since(began).Round(time.Millisecond))
	return nil
}

// startMemberComponents runs what a member has beside its API server. The
// first time it also creates the nodes and the control plane's credentials;
// on a restart those are still stored.
func (f *Federation) startMemberComponents(ctx context.Context, c *Cluster, first bool) error {
	kcm, err := f.startControllerManager(ctx, c, "*")
	if err != nil {
		return err
	}
	kwok, err := f.startKwok(ctx, c)
	if err != nil {
		return err
	}
	if first {
		if err := f.createNodes(ctx, c); err != nil {
			return err
		}
		if err := grantControlPlaneAccess(ctx, c); err != nil {
			return err
		}
	}
	if err := f.startScheduler(ctx, c); err != nil {
		return err
	}
	if err := waitFor(ctx, c.Name+" nodes Ready", f.nodesReady(c), c.apiserver, kwok); err != nil {
		return err
	}
	if f.opts.Metrics {
		if _, err := f.startMetricsServer(ctx, c, first); err != nil {
			return err
		}
	}
	return waitFor(ctx, c.Name+" kube-controller-manager", defaultServiceAccountExists(c), c.apiserver, kcm)
}

// StopMember stops every process of the member called name, API server
// included, as if the member's machines went away. Its objects stay in etcd,
// and its Cluster in the control plane is left alone: the control plane sees
// the member unreachable until StartMember. Stopping a stopped member does
// nothing. The error names any of its processes that had died before.
func (f *Federation) StopMember(ctx context.Context, name string) error {
	f.membersMu.Lock()
	defer f.membersMu.Unlock()
	m := f.Member(name)
	if m == nil {
		return fmt.Errorf("stopping member: no member called %q", name)
	}
	if f.stopped[name] {
		return nil
	}
	f.stopped[name] = true
	err := f.sup.stopCluster(name, f.opts.StopGracePeriod)
	log.FromContext(ctx).Info("Member stopped", "cluster", name)
	if err != nil {
		return fmt.Errorf("stopping member %s: %w", name, err)
	}
	return nil
}

// StartMember starts again a member stopped by StopMember, on the same
// endpoint, with the same certificates and stored objects, so that its
// Cluster registration (endpoint, token, CA bundle) still holds. It returns
// once the API server answers /readyz and honours the control plane's
// token, and the member's nodes are Ready; ctx and Options.StartTimeout bound
// the wait. Starting a running member does nothing.
func (f *Federation) StartMember(ctx context.Context, name string) error {
	f.membersMu.Lock()
	defer f.membersMu.Unlock()
	m := f.Member(name)
	if m == nil {
		return fmt.Errorf("starting member: no member called %q", name)
	}
	if !f.stopped[name] {
		return nil
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, f.opts.StartTimeout)
	defer cancel()
	err := f.restartAPIServer(ctx, m)
	if err == nil {
		var authorized func(context.Context) (bool, error)
		if authorized, err = controlPlaneAuthorized(m); err == nil {
			err = waitFor(ctx, name+" authorizes the control plane", authorized, m.apiserver)
		}
	}
	if err == nil && !f.opts.APIServerOnlyMembers {
		err = f.startMemberComponents(ctx, m, false)
	}
	if err != nil {
		// Whatever did start goes, so that a later StartMember begins clean.
		_ = f.sup.stopCluster(name, f.opts.StopGracePeriod)
		return fmt.Errorf("starting member %s again (logs in %s): %w", name, filepath.Join(f.LogDir(), name), err)
	}
	f.stopped[name] = false
	log.FromContext(ctx).Info("Member started again", "cluster", name, "elapsed", time.Since(began).Round(time.Millisecond))
	return nil
}

// Close stops every process, SIGTERM first and SIGKILL after the grace
// period, and waits until all are reaped. It reports the processes that had
// died before Close. Calling it again returns the first result.
func (f *Federation) Close() error {
	f.closeOnce.Do(func() {
		// Agents, the webhook and the aggregated API server go first, while the API servers they
		// talk to still run.
		agentsErr := f.stopAgents()
		webhookErr := f.webhook.stop()
		aggregatedErr := f.aggregated.stop()
		metricsAdapterErr := f.metricsAdapter.stop()
		f.closeErr = errors.Join(agentsErr, webhookErr, aggregatedErr, metricsAdapterErr, f.sup.stopAll(f.opts.StopGracePeriod))
		f.releaseHostClaim()
	})
	return f.closeErr
}

// Member returns the member called name, or nil.
func (f *Federation) Member(name string) *Cluster {
	for _, m := range f.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Cluster returns the control plane, the host or the member called name, or
// nil.
func (f *Federation) Cluster(name string) *Cluster {
	for _, c := range f.clusters() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// MemberNames returns member1 … memberN.
func (f *Federation) MemberNames() []string {
	names := make([]string, 0, len(f.Members))
	for _, m := range f.Members {
		names = append(names, m.Name)
	}
	return names
}

// LogDir is where each process logs, in <cluster>/<component>.log.
func (f *Federation) LogDir() string { return filepath.Join(f.WorkDir, "logs") }

// Process is one process of the federation: what it is and where.
type Process struct {
	// Cluster is the cluster it belongs to (karmada-apiserver, member1,
	// ...); etcd, shared by all, is in its own.
	Cluster string
	// Component is what runs: kube-apiserver, kube-controller-manager,
	// kube-scheduler, kwok, etcd.
	Component string
	PID       int
}

// Processes lists the federation's running processes, for measurements
// per component.
func (f *Federation) Processes() []Process { return f.sup.running() }

// PIDs returns the process ids of every process the federation started.
func (f *Federation) PIDs() []int { return f.sup.pids() }

// Ports returns every TCP port the federation reserved on 127.0.0.1.
func (f *Federation) Ports() []int { return f.ports.ports() }

// newClient builds the controller-runtime client of a cluster.
func (f *Federation) newClient(c *Cluster) error {
	cl, err := client.New(c.Config, client.Options{Scheme: f.scheme})
	if err != nil {
		return fmt.Errorf("creating client of %s: %w", c.Name, err)
	}
	c.Client = cl
	return nil
}

// defaultScheme knows client-go's types, CRDs and Clusters.
func defaultScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		clusterv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building scheme: %w", err)
		}
	}
	return scheme, nil
}
