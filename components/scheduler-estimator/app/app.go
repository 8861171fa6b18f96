// Package app is the scheduler estimator as a library: its flags and Run,
// used by cmd/main.go and by anything that runs an estimator in-process
// (local federations, tests). One estimator serves one member cluster.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/server"
	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/unschedulable"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// What the estimator reads in the member; rules for the member's role.
// +kubebuilder:rbac:groups="",resources=nodes;pods;resourcequotas,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments;replicasets,verbs=get;list;watch

// stopGrace is how long in-flight answers may take once ctx is done.
const stopGrace = 10 * time.Second

// Run serves the estimator of the member at cfg until ctx is done: it fills
// its caches from the member's informers, then serves the gRPC service.
// It returns nil when ctx ends, an error when the options are invalid or a
// listener or the caches fail.
func Run(ctx context.Context, cfg *rest.Config, opts Options, logger logr.Logger) error {
	served := false
	defer func() {
		// The caller's listener is Run's to close, served or not.
		if !served && opts.Listener != nil {
			_ = opts.Listener.Close()
		}
	}()
	if err := opts.Validate(); err != nil {
		return err
	}
	creds, err := opts.transportCredentials()
	if err != nil {
		return err
	}
	logger = logger.WithValues("cluster", opts.clusterName)
	ctx = logr.NewContext(ctx, logger)

	restConfig := rest.CopyConfig(cfg)
	restConfig.QPS, restConfig.Burst = float32(opts.qps), opts.burst
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("member client: %w", err)
	}

	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := server.NewMetrics(registry)
	if err != nil {
		return err
	}
	var ready atomic.Bool
	pprofAddr := "0"
	if opts.enablePprof {
		pprofAddr = opts.pprofAddr
	}
	stopHTTP, err := serveHTTP(ctx, httpAddrs{probe: opts.probeAddr, metrics: opts.metricsAddr, pprof: pprofAddr}, &ready, registry)
	if err != nil {
		return err
	}
	defer stopHTTP()

	nodes := cache.New()
	factory := informers.NewSharedInformerFactory(client, 0)
	srv, synced, err := wire(factory, nodes, opts, metrics)
	if err != nil {
		return err
	}
	// The informers stop when Run returns, also on an error while ctx
	// lives on: Shutdown waits for them, and they wait for their stop
	// channel.
	informerCtx, stopInformers := context.WithCancel(ctx)
	defer func() {
		stopInformers()
		factory.Shutdown()
	}()
	factory.Start(informerCtx.Done())
	logger.Info("Waiting for the member's nodes and pods")
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("the member's informers did not sync")
	}
	n, p := nodes.Len()
	logger.Info("Caches synced", "nodes", n, "boundPods", p)

	lis, err := opts.listen()
	if err != nil {
		return err
	}
	served = true
	serverOpts := []grpc.ServerOption{estimatorrpc.ServerCodec(), grpc.ChainUnaryInterceptor(withLogger(logger))}
	if creds != nil {
		serverOpts = append(serverOpts, grpc.Creds(creds))
	}
	g := grpc.NewServer(serverOpts...)
	estimatorrpc.RegisterEstimatorServer(g, srv)

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		// informerCtx ends with ctx, or when Serve failed and Run returns.
		<-informerCtx.Done()
		ready.Store(false)
		done := make(chan struct{})
		go func() { g.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(stopGrace):
			g.Stop()
		}
	}()
	ready.Store(true)
	logger.Info("Serving the scheduler estimator", "address", lis.Addr().String(), "tls", creds != nil)
	err = g.Serve(lis)
	if ctx.Err() != nil {
		<-stopped
		return nil
	}
	stopInformers()
	<-stopped
	return fmt.Errorf("serving gRPC on %s: %w", lis.Addr(), err)
}

// wire sets up the informers the estimator reads — slimmed by their
// transforms, indexed by controller for the unschedulable count — and the
// service answering from them. synced reports when the informers, and the
// node cache fed by their handlers, are complete.
func wire(factory informers.SharedInformerFactory, nodes *cache.Cache, opts Options, metrics *server.Metrics) (*server.Server, []toolscache.InformerSynced, error) {
	// Terminated pods hold nothing on their node and are not replicas any
	// more: the API server leaves them out of the list and the watch, and a
	// pod that terminates arrives as deleted.
	podInformer := factory.InformerFor(&corev1.Pod{}, func(c kubernetes.Interface, resync time.Duration) toolscache.SharedIndexInformer {
		return coreinformers.NewFilteredPodInformer(c, metav1.NamespaceAll, resync,
			toolscache.Indexers{unschedulable.ControllerIndex: unschedulable.IndexByController},
			func(o *metav1.ListOptions) {
				o.FieldSelector = fmt.Sprintf("status.phase!=%s,status.phase!=%s", corev1.PodSucceeded, corev1.PodFailed)
			})
	})
	nodeInformer := factory.Core().V1().Nodes().Informer()
	quotas := factory.Core().V1().ResourceQuotas()
	deployments := factory.Apps().V1().Deployments()
	replicaSets := factory.Apps().V1().ReplicaSets().Informer()

	for _, t := range []struct {
		informer  toolscache.SharedIndexInformer
		transform toolscache.TransformFunc
	}{
		{podInformer, cache.TransformPod},
		{nodeInformer, cache.TransformNode},
		{quotas.Informer(), stripManagedFields},
		{deployments.Informer(), unschedulable.TransformDeployment},
		{replicaSets, unschedulable.TransformReplicaSet},
	} {
		if err := t.informer.SetTransform(t.transform); err != nil {
			return nil, nil, fmt.Errorf("informer transform: %w", err)
		}
	}
	if err := replicaSets.AddIndexers(toolscache.Indexers{unschedulable.ControllerIndex: unschedulable.IndexByController}); err != nil {
		return nil, nil, fmt.Errorf("ReplicaSet index: %w", err)
	}
	nodeReg, err := nodeInformer.AddEventHandler(nodes.NodeHandler())
	if err != nil {
		return nil, nil, fmt.Errorf("node handler: %w", err)
	}
	podReg, err := podInformer.AddEventHandler(nodes.PodHandler())
	if err != nil {
		return nil, nil, fmt.Errorf("pod handler: %w", err)
	}

	var quotaLister corelisters.ResourceQuotaLister
	if opts.enabled(ResourceQuotaEstimate) {
		quotaLister = quotas.Lister()
	}
	srv := server.New(server.Options{
		ClusterName:   opts.clusterName,
		Nodes:         nodes,
		Quotas:        quotaLister,
		IgnoreAssumed: !opts.enabled(SchedulingOvercommitProtection),
		Workloads: &unschedulable.Workloads{
			Deployments: deployments.Lister(),
			ReplicaSets: replicaSets.GetIndexer(),
			Pods:        podInformer.GetIndexer(),
		},
		Parallelism: opts.parallelism,
		Metrics:     metrics,
	})
	synced := []toolscache.InformerSynced{
		nodeReg.HasSynced, podReg.HasSynced,
		quotas.Informer().HasSynced, deployments.Informer().HasSynced, replicaSets.HasSynced,
	}
	return srv, synced, nil
}

func stripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// withLogger gives every request the estimator's logger.
func withLogger(logger logr.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return handler(logr.NewContext(ctx, logger), req)
	}
}

// httpAddrs are where the HTTP endpoints are served; "0" or empty
// disables one.
type httpAddrs struct {
	probe, metrics, pprof string
}

// serveHTTP serves /healthz and /readyz, /metrics and /debug/pprof on their
// addresses (one server for those that share one, as Karmada's estimator
// does for probes and metrics). Listening happens before it returns, so a
// port in use is Run's error.
func serveHTTP(ctx context.Context, addrs httpAddrs, ready *atomic.Bool, registry *prometheus.Registry) (stop func(), err error) {
	probeAddr, metricsAddr := addrs.probe, addrs.metrics
	muxes := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if muxes[addr] == nil {
			muxes[addr] = http.NewServeMux()
		}
		return muxes[addr]
	}
	if probeAddr != "0" && probeAddr != "" {
		m := mux(probeAddr)
		m.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		m.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if !ready.Load() {
				http.Error(w, "caches not synced", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok"))
		})
	}
	if metricsAddr != "0" && metricsAddr != "" {
		mux(metricsAddr).Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	}
	if addrs.pprof != "0" && addrs.pprof != "" {
		m := mux(addrs.pprof)
		m.HandleFunc("/debug/pprof/", pprof.Index)
		m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		m.HandleFunc("/debug/pprof/profile", pprof.Profile)
		m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	var servers []*http.Server
	stop = func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	for addr, m := range muxes {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			stop()
			return nil, fmt.Errorf("listening on %s (--health-probe-bind-address, --metrics-bind-address or --profiling-bind-address): %w", addr, err)
		}
		s := &http.Server{Handler: m, ReadHeaderTimeout: 30 * time.Second}
		servers = append(servers, s)
		go func() {
			if err := s.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logr.FromContextOrDiscard(ctx).Error(err, "HTTP server failed", "address", addr)
			}
		}()
	}
	return stop, nil
}
