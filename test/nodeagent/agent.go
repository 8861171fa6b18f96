// Package nodeagent is a test-only node agent: it registers one Node in a host
// cluster and runs the pods the kube-scheduler binds to it as local processes,
// so that tests can run what charts render (kube-apiserver, etcd, Flotilla's
// components) without a container runtime. It is never shipped.
//
// What a pod gets:
//   - An IP of its own in 127.0.0.0/8 (a /16 block per agent, claimed on this
//     machine so that agents of parallel tests do not collide), reported as
//     status.podIP; hostIP is 127.0.0.1.
//   - Its volumes as directories under Dir: Secret, ConfigMap, downward API
//     and projected ones (with ServiceAccount tokens from the TokenRequest
//     API) written like the kubelet's atomic writer and kept up to date;
//     emptyDir; hostPath mapped under Dir/hostpath (never the real path);
//     PersistentVolumeClaims as a directory per claim under Dir/claims. The
//     agent installs a default StorageClass, flotilla-test, and provisions its
//     claims itself (see storage.go).
//   - Per container, a process: the binary Images maps the container's image
//     to, with command[1:] and args after $(VAR) expansion, and the env the
//     kubelet would give it. Since every process sees this machine's
//     filesystem, each volumeMount's mountPath found in args, env values and
//     workingDir is rewritten to the volume's directory.
//   - DNS through /etc/hosts: each process runs in mount and UTS namespaces
//     of its own where the agent's hosts file (Services and StatefulSet pods
//     by name) is bind-mounted on /etc/hosts, and the ServiceAccount token
//     volume on /var/run/secrets/kubernetes.io/serviceaccount, so client-go's
//     in-cluster config works. The only trace on the host is that last
//     directory, created empty when missing, since a mount point must exist.
//   - Services as userspace TCP proxies on their ClusterIP (the host cluster
//     of internal/localfed has a loopback Service range) and NodePort on
//     127.0.0.1, to the pods that are Ready, round robin.
//   - Startup, readiness and liveness probes (httpGet, tcpSocket, exec),
//     restarts with a back-off capped at 10s, and a status written the way
//     the kubelet writes it.
//
// All processes share this machine's network namespace: a server must
// listen on its pod's IP ($(POD_IP)) rather than on every address, or two
// pods would want the same port. One agent serves one host cluster.
//
// Not supported: UDP and SCTP Services, ExternalName Services in DNS,
// Services without a selector (except default/kubernetes, forwarded to the
// API server), service environment variables other than KUBERNETES_SERVICE_*,
// the pod's bare hostname in /etc/hosts, gRPC probes, exec probes of
// binaries outside Images (a shell, say), lifecycle hooks, resource limits,
// security contexts, image updates of a running pod, images not in Images
// (the container waits with ErrImagePull), CSI and other volume kinds, and
// events.
package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Options configures an agent.
type Options struct {
	// Host is the host cluster's API server. The agent acts with these
	// credentials, which must let it write Nodes, Leases, pods' status,
	// PersistentVolumes and StorageClasses, and request ServiceAccount tokens.
	Host *rest.Config
	// NodeName is the Node the agent registers. Default: nodeagent.
	NodeName string
	// Dir receives everything the agent writes: pods/<ns>_<pod>_<uid>/ with
	// logs and volumes, hostpath/, claims/ and the hosts file. Required.
	Dir string
	// Images maps a container image, as pods name it, to the path of the
	// local binary that stands for it.
	Images map[string]string
	// ClusterDomain is the DNS domain of Services. Default: cluster.local.
	ClusterDomain string
	// MaxGracePeriod caps every termination grace period. Default: 10s.
	MaxGracePeriod time.Duration
	// MaxPods is the node's pod capacity. Default: 110, the kubelet's.
	MaxPods int
	// Logger receives the agent's own log.
	Logger logr.Logger
}

const (
	defaultNodeName      = "nodeagent"
	defaultClusterDomain = "cluster.local"
	defaultMaxGrace      = 10 * time.Second
	defaultMaxPods       = 110
	// stopGrace is how long Stop lets each process end after SIGTERM.
	stopGrace = 2 * time.Second
)

// Agent is a running node agent. Stop stops it.
type Agent struct {
	opts       Options
	log        logr.Logger
	client     kubernetes.Interface
	apiAddress string // host:port of the host's API server

	block   *ipBlock
	network *network
	tokens  *tokenCache

	services   corelisters.ServiceLister
	secrets    corelisters.SecretLister
	configMaps corelisters.ConfigMapLister
	claims     corelisters.PersistentVolumeClaimLister
	volumes    corelisters.PersistentVolumeLister

	ctx    context.Context
	cancel context.CancelFunc
	loops  sync.WaitGroup // informers and background loops
	pods   sync.WaitGroup // pod workers

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	// done are the pods whose workers ended: events that still come for
	// them (the last updates before the delete) start nothing.
	done     map[types.UID]bool
	stopped  bool
	stopOnce sync.Once

	storageKick chan struct{}
	// saMountDir makes the ServiceAccount mount point once.
	saMountDir func() error
}

// Supported reports why pods cannot run on this machine, or nil: the agent
// needs Linux and root, to give each process its own mount namespace.
func Supported() error { return supported() }

// Start registers the node and starts running the pods bound to it. ctx
// bounds the start only; the agent runs until Stop.
func Start(ctx context.Context, opts Options) (*Agent, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	if opts.Host == nil || opts.Dir == "" {
		return nil, errors.New("nodeagent: Host and Dir are required")
	}
	if opts.NodeName == "" {
		opts.NodeName = defaultNodeName
	}
	if opts.ClusterDomain == "" {
		opts.ClusterDomain = defaultClusterDomain
	}
	if opts.MaxGracePeriod <= 0 {
		opts.MaxGracePeriod = defaultMaxGrace
	}
	if opts.MaxPods <= 0 {
		opts.MaxPods = defaultMaxPods
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("nodeagent: creating %s: %w", dir, err)
	}
	apiURL, err := url.Parse(opts.Host.Host)
	if err != nil || apiURL.Port() == "" {
		return nil, fmt.Errorf("nodeagent: host API server %q has no host:port", opts.Host.Host)
	}
	cfg := rest.CopyConfig(opts.Host)
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("nodeagent: %w", err)
	}
	block, err := claimIPBlock()
	if err != nil {
		return nil, fmt.Errorf("nodeagent: %w", err)
	}

	a := &Agent{
		opts:        opts,
		log:         opts.Logger.WithValues("node", opts.NodeName),
		client:      cs,
		apiAddress:  apiURL.Host,
		block:       block,
		tokens:      newTokenCache(cs),
		workers:     map[types.UID]*podWorker{},
		done:        map[types.UID]bool{},
		storageKick: make(chan struct{}, 1),
		saMountDir: sync.OnceValue(func() error {
			return os.MkdirAll(serviceAccountMountPath, 0o755)
		}),
	}
	a.network = newNetwork(a)
	a.ctx, a.cancel = context.WithCancel(context.Background())
	if err := a.start(ctx); err != nil {
		a.Stop()
		return nil, fmt.Errorf("nodeagent: %w", err)
	}
	a.log.Info("Node agent started", "dir", dir, "podIPs", block.String())
	return a, nil
}

func (a *Agent) start(ctx context.Context) error {
	if err := a.registerNode(ctx); err != nil {
		return err
	}
	if err := a.ensureStorageClass(ctx); err != nil {
		return err
	}

	shared := informers.NewSharedInformerFactory(a.client, 0)
	a.services = shared.Core().V1().Services().Lister()
	a.secrets = shared.Core().V1().Secrets().Lister()
	a.configMaps = shared.Core().V1().ConfigMaps().Lister()
	a.claims = shared.Core().V1().PersistentVolumeClaims().Lister()
	a.volumes = shared.Core().V1().PersistentVolumes().Lister()
	kickNetwork := onAnyChange(func(any) { a.network.changed() })
	kickStorage := onAnyChange(func(any) { kick(a.storageKick) })
	kickPods := onAnyChange(func(obj any) { a.namespaceChanged(obj) })
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{shared.Core().V1().Services().Informer(), kickNetwork},
		{shared.Core().V1().Secrets().Informer(), kickPods},
		{shared.Core().V1().ConfigMaps().Informer(), kickPods},
		{shared.Core().V1().PersistentVolumeClaims().Informer(), kickStorage},
		{shared.Core().V1().PersistentVolumes().Informer(), kickStorage},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return err
		}
	}
	// Only the pods bound to this node, as a kubelet watches them.
	mine := informers.NewSharedInformerFactoryWithOptions(a.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", a.opts.NodeName).String()
	}))
	podInformer := mine.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.podChanged(obj, false) },
		UpdateFunc: func(_, obj any) { a.podChanged(obj, false) },
		DeleteFunc: func(obj any) { a.podChanged(obj, true) },
	}); err != nil {
		return err
	}
	a.loops.Go(func() {
		<-a.ctx.Done()
		shared.Shutdown()
		mine.Shutdown()
	})
	// Services, Secrets and claims first: a pod's worker needs them.
	shared.Start(a.ctx.Done())
	if !waitSynced(ctx, shared.WaitForCacheSync) {
		return errors.New("informer caches never synced")
	}
	mine.Start(a.ctx.Done())
	if !waitSynced(ctx, mine.WaitForCacheSync) {
		return errors.New("pod informer cache never synced")
	}
	a.loops.Go(func() { a.heartbeat(a.ctx) })
	a.loops.Go(func() { a.network.run(a.ctx) })
	a.loops.Go(func() { a.provision(a.ctx) })
	return nil
}

// Stop stops every process, then the agent. The Node and the pods' objects
// stay in the host cluster.
func (a *Agent) Stop() {
	a.stopOnce.Do(func() {
		a.mu.Lock()
		a.stopped = true
		a.mu.Unlock()
		if a.cancel != nil {
			a.cancel()
		}
		a.pods.Wait()
		a.loops.Wait()
		a.network.close()
		a.block.release()
		a.log.Info("Node agent stopped")
	})
}

// NodeName is the name of the agent's Node.
func (a *Agent) NodeName() string { return a.opts.NodeName }

// Logs returns what a container of a pod wrote to stdout and stderr, every
// run of it appended, from the newest pod of that namespace and name.
func (a *Agent) Logs(namespace, pod, container string) ([]byte, error) {
	matches, err := filepath.Glob(filepath.Join(a.opts.Dir, "pods", namespace+"_"+pod+"_*", container+".log"))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("no log of container %s in pod %s/%s", container, namespace, pod)
	}
	newest := slices.MaxFunc(matches, func(x, y string) int {
		return modTime(x).Compare(modTime(y))
	})
	return os.ReadFile(newest)
}

func modTime(path string) time.Time {
	info, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}

// podChanged hands a pod of this node to its worker, starting one for a pod
// seen for the first time.
func (a *Agent) podChanged(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	a.mu.Lock()
	w := a.workers[pod.UID]
	if w == nil && !deleted && !a.stopped && !a.done[pod.UID] {
		w = newPodWorker(a, pod)
		a.workers[pod.UID] = w
		a.pods.Go(func() {
			w.run(a.ctx)
			a.mu.Lock()
			delete(a.workers, pod.UID)
			a.done[pod.UID] = true
			a.mu.Unlock()
			a.network.changed()
		})
	}
	a.mu.Unlock()
	if w != nil {
		w.update(pod, deleted)
	}
	a.network.changed()
}

// namespaceChanged tells the workers of a Secret's or ConfigMap's namespace
// to bring their volumes up to date.
func (a *Agent) namespaceChanged(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(interface{ GetNamespace() string })
	if !ok {
		return
	}
	for _, w := range a.podWorkers() {
		if w.namespace == o.GetNamespace() {
			w.kick()
		}
	}
}

// podWorkers is every running worker.
func (a *Agent) podWorkers() []*podWorker {
	a.mu.Lock()
	defer a.mu.Unlock()
	ws := make([]*podWorker, 0, len(a.workers))
	for _, w := range a.workers {
		ws = append(ws, w)
	}
	return ws
}

// podDir is the directory of a pod: its logs, volumes and working
// directories.
func (a *Agent) podDir(pod *corev1.Pod) string {
	return filepath.Join(a.opts.Dir, "pods", pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}

// DialContext connects to address as a pod would: a Service's DNS name or a
// pod's, a ClusterIP, a pod IP, or any other address in 127.0.0.0/8. Use it
// as a rest.Config's Dial to reach https://<svc>.<ns>.svc.cluster.local.
// Addresses outside the loopback range are refused.
func (a *Agent) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ip, ok := a.Resolve(host)
	if !ok {
		return nil, &net.DNSError{Err: "no such host known to the node agent", Name: host, IsNotFound: true}
	}
	if parsed := net.ParseIP(ip); parsed == nil || !parsed.IsLoopback() {
		return nil, fmt.Errorf("nodeagent: %s resolves to %s, outside 127.0.0.0/8", host, ip)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort(ip, port))
}

// Resolve returns the address the agent's hosts file gives host: a
// Service's ClusterIP, a pod's IP for a headless Service or a StatefulSet
// pod's name. An IP address resolves to itself.
func (a *Agent) Resolve(host string) (string, bool) {
	return a.network.resolve(host)
}

// onAnyChange calls f for every add, update and delete.
func onAnyChange(f func(obj any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    f,
		UpdateFunc: func(_, obj any) { f(obj) },
		DeleteFunc: f,
	}
}

// waitSynced waits for a factory's caches until ctx ends.
func waitSynced[T comparable](ctx context.Context, wait func(<-chan struct{}) map[T]bool) bool {
	for _, ok := range wait(ctx.Done()) {
		if !ok {
			return false
		}
	}
	return true
}

// kick signals ch without blocking; a signal already pending is enough.
func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
