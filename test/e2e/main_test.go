// Package e2e runs whole paths — template and policy in, objects and status in
// members out — on one local federation of real API servers with the
// controller-manager and scheduler running in-process. The scenarios share the
// federation and run in parallel where they touch different objects.
package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	cmapp "github.com/flotilla-io/flotilla/components/controller-manager/app"
	deschedapp "github.com/flotilla-io/flotilla/components/descheduler/app"
	estimatorapp "github.com/flotilla-io/flotilla/components/scheduler-estimator/app"
	schedapp "github.com/flotilla-io/flotilla/components/scheduler/app"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

// fed is the federation every scenario runs on; cp is a client of its
// control plane that knows Flotilla's types.
var (
	fed *localfed.Federation
	cp  client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	logger := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 0})
	// controller-runtime's own logger, which clients built outside a manager
	// use, would otherwise complain at length that it was never set.
	log.SetLogger(logger)
	ctx, cancel := context.WithCancel(log.IntoContext(context.Background(), logger))
	defer cancel()

	workDir, err := os.MkdirTemp("", "flotilla-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fed, err = localfed.Start(ctx, localfed.Options{Members: 3, WorkDir: workDir, StartTimeout: 5 * time.Minute,
		// Clusters and their proxy are served as in Karmada, by the
		// aggregated API server.
		AggregatedAPIServer: true,
		// Members serve pod and node metrics from kwok's simulated usage,
		// and the control plane serves them aggregated, for the
		// autoscaling scenarios.
		Metrics: true, MetricsAdapter: true,
		// The failover scenario's ClusterTaintPolicy taints NoExecute; the
		// quota scenario's bindings are refused over quota.
		WebhookArgs: []string{"--allow-no-execute-taint-policy=true", "--feature-gates=FederatedQuotaEnforcement=true"}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the local federation: %v\n", err)
		return 1
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha1.AddToScheme, workv1alpha2.AddToScheme, networkingv1alpha1.AddToScheme, autoscalingv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if cp, err = client.New(fed.ControlPlane.Config, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	if err := startComponents(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// A binding scheduled while a member still carries the not-ready taint
	// of its first moments stays off that member.
	code := 1
	if err := waitFederationHealthy(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	for _, c := range append([]*component{controllerManager, scheduler, descheduler}, estimators...) {
		if err := c.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", c.name, err)
			code = 1
		}
		if err := c.exited(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if err := fed.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the local federation: %v\n", err)
		code = 1
	}
	if code == 0 {
		_ = os.RemoveAll(workDir)
	} else {
		fmt.Fprintf(os.Stderr, "local federation kept in %s; logs in %s\n", workDir, fed.LogDir())
	}
	return code
}

// controllerManager, scheduler and descheduler run in-process against the
// control plane, and a scheduler estimator per member against that member.
// A scenario may stop and start the controller-manager alone.
var (
	controllerManager, scheduler, descheduler *component
	estimators                                []*component
)

// startComponents runs the controller-manager and the scheduler against the
// control plane, as flotillactl local up does, until they are stopped.
func startComponents(ctx context.Context) error {
	logger := log.FromContext(ctx)
	cm, err := cmapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--cluster-status-update-frequency=2s", "--cluster-health-probe-period=2s",
		"--feature-gates=Failover=true,StatefulFailoverInjection=true,FederatedQuotaEnforcement=true", "--enable-no-execute-taint-eviction=true",
		// The HPA scenario's controllers, off by default.
		"--controllers=*,hpaScaleTargetMarker,deploymentReplicasSyncer",
		// The FederatedHPA scenario scales within a couple of minutes.
		"--horizontal-pod-autoscaler-sync-period=5s")
	if err != nil {
		return fmt.Errorf("controller-manager options: %w", err)
	}
	// A scenario restarts it in this process.
	cm.Restartable = true
	// The scheduler asks the members' estimators, as the descheduler does:
	// every scenario runs with them, as a fleet that deploys them would.
	sched, err := schedapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0", "--enable-scheduler-estimator")
	if err != nil {
		return fmt.Errorf("scheduler options: %w", err)
	}
	// Passes every 2s over pods unschedulable for 5s: the descheduling
	// scenario's pod is Pending for good, while other scenarios' pods wait
	// for a node for no more than a moment.
	desched, err := deschedapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--descheduling-interval=2s", "--unschedulable-threshold=5s")
	if err != nil {
		return fmt.Errorf("descheduler options: %w", err)
	}
	for _, m := range fed.Members {
		opts, err := estimatorapp.ParseOptions("--cluster-name="+m.Name, "--health-probe-bind-address=0")
		if err != nil {
			return fmt.Errorf("estimator options: %w", err)
		}
		// Each start listens anew on a free port and points the member's
		// estimator Service at it.
		estimators = append(estimators, &component{name: "estimator of " + m.Name, parent: ctx, run: func(ctx context.Context) error {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			if err := fed.RegisterEstimator(ctx, m.Name, lis.Addr().String()); err != nil {
				_ = lis.Close()
				return err
			}
			opts := opts
			opts.Listener = lis
			return estimatorapp.Run(ctx, m.Config, opts, logger.WithName("estimator").WithValues("member", m.Name))
		}})
	}
	controllerManager = &component{name: "controller-manager", parent: ctx, run: func(ctx context.Context) error {
		return cmapp.Run(ctx, fed.ControlPlane.Config, cm, logger.WithName("controller-manager"))
	}}
	scheduler = &component{name: "scheduler", parent: ctx, run: func(ctx context.Context) error {
		return schedapp.Run(ctx, fed.ControlPlane.Config, sched, logger.WithName("scheduler"))
	}}
	descheduler = &component{name: "descheduler", parent: ctx, run: func(ctx context.Context) error {
		return deschedapp.Run(ctx, fed.ControlPlane.Config, desched, logger.WithName("descheduler"))
	}}
	errs := []error{controllerManager.start(), scheduler.start(), descheduler.start()}
	for _, e := range estimators {
		errs = append(errs, e.start())
	}
	return errors.Join(errs...)
}

// component is one in-process component: run until stopped, and started
// again by a scenario. A run that returns without being stopped is a crash,
// which exited reports.
type component struct {
	name   string
	parent context.Context
	run    func(context.Context) error

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	runErr  error   // of the current run, once done is closed
	crashes []error // runs that returned on their own
}

// start begins a run; the component must not be running.
func (c *component) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return fmt.Errorf("%s is already running", c.name)
	}
	ctx, cancel := context.WithCancel(c.parent)
	done := make(chan struct{})
	c.cancel, c.done = cancel, done
	go func() {
		err := c.run(ctx)
		c.mu.Lock()
		defer c.mu.Unlock()
		if ctx.Err() == nil {
			crash := fmt.Errorf("%s returned while running", c.name)
			if err != nil {
				crash = fmt.Errorf("%s returned while running: %w", c.name, err)
			}
			c.crashes = append(c.crashes, crash)
		}
		c.runErr = err
		close(done)
	}()
	return nil
}

// stop ends the current run, waits for it to return and returns its error;
// it does nothing when the component is not running.
func (c *component) stop() error {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.cancel, c.done = nil, nil
	c.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	<-done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runErr
}

// running reports whether a run was started and not stopped.
func (c *component) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done != nil
}

// exited reports every run that returned without being stopped.
func (c *component) exited() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.crashes...)
}

// waitFederationHealthy waits until every member's Cluster is Ready=True with
// neither the not-ready nor the unreachable taint.
func waitFederationHealthy(ctx context.Context) error {
	for _, m := range fed.MemberNames() {
		var last error
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			ok, err := clusterIs(ctx, &clusterv1alpha1.Cluster{}, m, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)
			last = err
			return ok, nil
		})
		if err != nil && last != nil {
			return fmt.Errorf("waiting for the Cluster %s to be Ready and untainted: %w (last error: %w)", m, err, last)
		}
		if err != nil {
			return fmt.Errorf("waiting for the Cluster %s to be Ready and untainted: %w", m, err)
		}
		if err := waitProxy(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// waitProxy waits until the administrator reaches member m through the
// cluster proxy: the unified-auth controller's Works have let m's
// impersonator impersonate them.
func waitProxy(ctx context.Context, m string) error {
	kube, err := kubernetes.NewForConfig(fed.ControlPlane.Config)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		last = kube.Discovery().RESTClient().Get().AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters/" + m + "/proxy/api").Do(ctx).Error()
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the administrator to reach %s through the cluster proxy: %w (last error: %v)", m, err, last)
	}
	return nil
}

// clusterIs reads the Cluster into got and reports whether its Ready
// condition and health taints are as given.
func clusterIs(ctx context.Context, got *clusterv1alpha1.Cluster, name string, status metav1.ConditionStatus, reason string, taints []string) (bool, error) {
	if err := cp.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
		return false, err
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	return cond != nil && cond.Status == status && cond.Reason == reason && slices.Equal(healthTaints(got), taints), nil
}

// healthTaints are the Cluster's not-ready and unreachable taints, as
// key:effect.
func healthTaints(c *clusterv1alpha1.Cluster) []string {
	var out []string
	for _, t := range c.Spec.Taints {
		if t.Key == clusterv1alpha1.TaintClusterNotReady || t.Key == clusterv1alpha1.TaintClusterUnreachable {
			out = append(out, t.Key+":"+string(t.Effect))
		}
	}
	return out
}
