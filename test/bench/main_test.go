package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

var (
	cmArgs    = flag.String("bench.cm-args", "", "Extra flags for the controller-manager, space-separated.")
	schedArgs = flag.String("bench.sched-args", "", "Extra flags for the scheduler, space-separated.")
	cpArgs    = flag.String("bench.cp-apiserver-args", "", `Extra flags for the control plane's kube-apiserver, space-separated, e.g. "--audit-policy-file=policy.yaml --audit-log-path=audit.log" to see who writes what.`)
	cmEnv     = flag.String("bench.cm-env", "", `Extra environment of the controller-manager, space-separated, e.g. "GOMEMLIMIT=270MiB", what --memory-limit-ratio sets in a container limited to 300 MiB.`)
	cmMemory  = flag.String("bench.cm-memory-limit", "", `Run the controller-manager in a memory cgroup of its own with this limit, e.g. "300Mi", as a container with a memory limit; needs root. Going over the limit kills it and fails the run.`)
	sizes     = flag.String("bench.sizes", "1000,5000", "Template counts of BenchmarkPropagation's cases, comma-separated.")
	keep      = flag.Bool("bench.keep", false, "Keep the work directory (logs, kubeconfig) even when everything passes.")
	pull      = flag.Int("bench.pull-members", 0, "How many of the 3 members are in Pull mode, each with its agent running in the benchmark's process.")
	agentArgs = flag.String("bench.agent-args", "--concurrent-work-syncs=20 --concurrent-work-status-syncs=20 --kube-api-qps=400 --kube-api-burst=800 --event-qps=17 --event-burst=34",
		"Extra flags of the Pull members' agents, space-separated; by default the controller-manager's concurrency and control-plane rate, and a third of its event rate each, so that Pull and Push figures compare the modes and not karmada-agent's defaults or three event budgets.")
)

// env is what every scenario runs on: the federation, clients of its
// clusters, and the two Flotilla processes under measurement.
type env struct {
	fed *localfed.Federation
	// cp knows Flotilla's types; cpKube creates templates without client-side
	// throttling, so that the rate is the API server's.
	cp        client.Client
	cpKube    kubernetes.Interface
	members   []memberClient
	cm, sched *component
	// apiserver is the control plane's kube-apiserver process.
	apiserver procStats
}

type memberClient struct {
	name string
	kube kubernetes.Interface
}

var bench *env

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	logger := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 0})
	log.SetLogger(logger)
	ctx, cancel := context.WithCancel(log.IntoContext(context.Background(), logger))
	defer cancel()

	workDir, err := os.MkdirTemp("", "flotilla-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e, stop, err := setUp(ctx, workDir)
	code := 1
	if err != nil {
		fmt.Fprintf(os.Stderr, "setting up the benchmark federation: %v\n", err)
	} else {
		bench = e
		code = m.Run()
	}
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping: %v\n", err)
		code = 1
	}
	if code == 0 && !*keep {
		_ = os.RemoveAll(workDir)
	} else {
		fmt.Fprintf(os.Stderr, "benchmark federation kept in %s\n", workDir)
	}
	return code
}

// setUp builds the components, starts a federation of 3 bare members and runs
// the components against its control plane. stop undoes whatever was done,
// also after an error.
func setUp(ctx context.Context, workDir string) (*env, func() error, error) {
	var stops []func() error
	stop := func() error {
		var errs []string
		for i := len(stops) - 1; i >= 0; i-- {
			if err := stops[i](); err != nil {
				errs = append(errs, err.Error())
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return nil
	}

	binDir := filepath.Join(workDir, "bin")
	if err := buildComponents(ctx, binDir); err != nil {
		return nil, stop, err
	}
	if *pull < 0 || *pull > 3 {
		return nil, stop, fmt.Errorf("-bench.pull-members must be between 0 and 3, got %d", *pull)
	}
	if *pull > 0 {
		fmt.Fprintf(os.Stderr, "%d of 3 members in Pull mode, agents with %q\n", *pull, *agentArgs)
	}
	fed, err := localfed.Start(ctx, localfed.Options{
		Members:                   3 - *pull,
		PullMembers:               *pull,
		AgentArgs:                 strings.Fields(*agentArgs),
		APIServerOnlyMembers:      true,
		Profiling:                 profiling(),
		ControlPlaneAPIServerArgs: strings.Fields(*cpArgs),
		WorkDir:                   filepath.Join(workDir, "federation"),
		StartTimeout:              5 * time.Minute,
		// Its own process, so that its CPU is counted, as the deployed
		// karmada-webhook's is.
		WebhookBinary: filepath.Join(binDir, "webhook"),
	})
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, fed.Close)

	e := &env{fed: fed}
	if err := e.connect(); err != nil {
		return nil, stop, err
	}
	if e.apiserver, err = findControlPlaneAPIServer(fed.PIDs()); err != nil {
		return nil, stop, err
	}

	logDir := filepath.Join(workDir, "logs")
	// Both serve nothing: the probes' and metrics' default ports would clash
	// with each other and with anything else on the machine.
	common := []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}
	if *cmArgs != "" || *cmEnv != "" || *cmMemory != "" {
		fmt.Fprintf(os.Stderr, "controller-manager flags %q, environment %q, memory limit %q\n", *cmArgs, *cmEnv, *cmMemory)
	}
	var cgroup *memoryCgroup
	if *cmMemory != "" {
		limit, err := resource.ParseQuantity(*cmMemory)
		if err != nil {
			return nil, stop, fmt.Errorf("-bench.cm-memory-limit: %w", err)
		}
		if cgroup, err = newMemoryCgroup(fmt.Sprintf("flotilla-bench-%d-controller-manager", os.Getpid()), limit.Value()); err != nil {
			return nil, stop, fmt.Errorf("-bench.cm-memory-limit: %w", err)
		}
		// Removed after the controller-manager has stopped (stops run last first).
		stops = append(stops, cgroup.remove)
	}
	// Failover on, for BenchmarkFailover; the propagation benchmarks never
	// taint a member, so its controllers only watch there.
	failover := []string{"--feature-gates=Failover=true", "--enable-no-execute-taint-eviction=true"}
	e.cm, err = startComponent("controller-manager", filepath.Join(binDir, "controller-manager"),
		slices.Concat(common, failover, strings.Fields(*cmArgs)), strings.Fields(*cmEnv), fed.KubeconfigPath, logDir, cgroup)
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, e.cm.stop)
	e.sched, err = startComponent("scheduler", filepath.Join(binDir, "scheduler"),
		append(common, strings.Fields(*schedArgs)...), nil, fed.KubeconfigPath, logDir, nil)
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, e.sched.stop)

	if err := e.waitClustersReady(ctx); err != nil {
		return nil, stop, err
	}
	return e, stop, nil
}

// buildComponents builds the controller-manager, the scheduler and the webhook from this
// checkout, as a release would run them.
func buildComponents(ctx context.Context, binDir string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	for name, pkg := range map[string]string{
		"controller-manager": "./components/controller-manager/cmd",
		"scheduler":          "./components/scheduler/cmd",
		"webhook":            "./components/webhook/cmd",
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(binDir, name), pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %w\n%s", name, err, out)
		}
	}
	return nil
}

// moduleRoot is the directory of this module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

// connect builds the clients of the control plane and the members.
func (e *env) connect() error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	var err error
	if e.cp, err = client.New(e.fed.ControlPlane.Config, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("control plane client: %w", err)
	}
	unthrottled := rest.CopyConfig(e.fed.ControlPlane.Config)
	unthrottled.QPS = -1 // no client-side rate limiter
	if e.cpKube, err = kubernetes.NewForConfig(unthrottled); err != nil {
		return fmt.Errorf("control plane clientset: %w", err)
	}
	for _, m := range e.fed.Members {
		kube, err := kubernetes.NewForConfig(m.Config)
		if err != nil {
			return fmt.Errorf("clientset of %s: %w", m.Name, err)
		}
		e.members = append(e.members, memberClient{name: m.Name, kube: kube})
	}
	return nil
}

// waitClustersReady waits until the controller-manager has found every
// member healthy, the first sign that it runs.
func (e *env) waitClustersReady(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := e.componentsAlive(); err != nil {
			return false, err
		}
		var clusters clusterv1alpha1.ClusterList
		if err := e.cp.List(ctx, &clusters); err != nil {
			return false, nil
		}
		ready := 0
		for _, c := range clusters.Items {
			if meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				ready++
			}
		}
		return ready == len(e.members), nil
	})
}

// componentsAlive fails once the controller-manager or the scheduler has
// exited.
func (e *env) componentsAlive() error {
	for _, c := range []*component{e.cm, e.sched} {
		if err := c.exitErr(); err != nil {
			return err
		}
	}
	return nil
}
