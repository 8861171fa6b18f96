package scheduler_test

import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/api/equality"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/queue"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/scheduler"
)

// The API server shared by every integration test and benchmark of the
// package; nil when the Kubernetes binaries are missing.
var (
	apiConfig *rest.Config
	apiClient client.Client
	scheme    = runtime.NewScheme()
	noServer  string
)

// repoRoot is relative to this package's directory, where go test runs.
var repoRoot = filepath.Join("..", "..", "..", "..")

func TestMain(m *testing.M) {
	os.Exit(runWithAPIServer(m))
}

func runWithAPIServer(m *testing.M) int {
	// Quiet by default; FLOTILLA_TEST_LOG=<verbosity> shows the scheduler's
	// logs.
	if v := os.Getenv("FLOTILLA_TEST_LOG"); v != "" {
		level, _ := strconv.Atoi(v)
		ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(level))))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme, policyv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		// The Makefile's default location, so plain `go test` works once
		// `make k8s-binaries` has run.
		dir := filepath.Join(repoRoot, "bin", "k8s", "v1.37.2")
		if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
			noServer = "KUBEBUILDER_ASSETS is not set and " + dir + " has no kube-apiserver: run `make k8s-binaries`"
			return m.Run()
		}
		abs, _ := filepath.Abs(dir)
		_ = os.Setenv("KUBEBUILDER_ASSETS", abs)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the API server: %v\n", err)
		}
	}()
	// The scheduler writes in bursts; client-side throttling would measure
	// the limiter, not the scheduler.
	cfg.QPS, cfg.Burst = 5000, 10000
	apiConfig = cfg
	if apiClient, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintf(os.Stderr, "building a client: %v\n", err)
		return 1
	}
	return m.Run()
}

func needAPIServer(tb testing.TB) {
	tb.Helper()
	if apiConfig == nil {
		tb.Fatal(noServer)
	}
}

// startScheduler runs a manager with one scheduler named name until the
// test ends.
func startScheduler(tb testing.TB, name string, opts scheduler.Options) *scheduler.Scheduler {
	tb.Helper()
	s, stop := startStoppableScheduler(tb, name, opts)
	tb.Cleanup(stop)
	return s
}

// startStoppableScheduler runs a manager with one scheduler until stop is
// called.
func startStoppableScheduler(tb testing.TB, name string, opts scheduler.Options) (*scheduler.Scheduler, func()) {
	tb.Helper()
	mgr, err := ctrl.NewManager(apiConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptrTo(true)},
	})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts.SchedulerName = name
	if opts.Recorder == nil {
		opts.Recorder = mgr.GetEventRecorder("flotilla-scheduler")
	}
	if opts.Queue.InitialBackoff == 0 {
		opts.Queue = queue.Options{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, UnschedulableTimeout: 5 * time.Second}
	}
	s := scheduler.New(mgr.GetClient(), mgr.GetCache(), opts)
	if err := s.SetupWithManager(ctx, mgr); err != nil {
		cancel()
		tb.Fatal(err)
	}
	schedulerCaches.Store(s, mgr.GetCache())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	return s, func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				tb.Errorf("manager: %v", err)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// schedulerCaches holds each started scheduler's informer cache, by
// scheduler, for waitSchedulerSees.
var schedulerCaches sync.Map

// waitSchedulerSees waits until s's cache holds each cluster with the
// status the test gave it: a binding created before that would be
// scheduled against a cluster the scheduler has not seen yet, or has seen
// only without status (not Ready), which a loaded machine makes likely.
func waitSchedulerSees(tb testing.TB, s *scheduler.Scheduler, clusters ...*clusterv1alpha1.Cluster) {
	tb.Helper()
	v, ok := schedulerCaches.Load(s)
	if !ok {
		tb.Fatal("scheduler not started by startScheduler")
	}
	reader := v.(client.Reader)
	for _, want := range clusters {
		eventually(tb, "the scheduler's cache has cluster "+want.Name+" with its status", func() (bool, string) {
			var got clusterv1alpha1.Cluster
			if err := reader.Get(context.Background(), client.ObjectKeyFromObject(want), &got); err != nil {
				return false, err.Error()
			}
			return equality.Semantic.DeepEqual(got.Status, want.Status), fmt.Sprintf("status %+v", got.Status)
		})
	}
}
