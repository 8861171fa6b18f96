package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2/textlogger"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cmapp "github.com/flotilla-io/flotilla/components/controller-manager/app"
	deschedapp "github.com/flotilla-io/flotilla/components/descheduler/app"
	estimatorapp "github.com/flotilla-io/flotilla/components/scheduler-estimator/app"
	schedapp "github.com/flotilla-io/flotilla/components/scheduler/app"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

func newLocalCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run a federation on this machine: a control plane and member clusters, no Docker",
	}
	cmd.AddCommand(newLocalUpCommand(), newLocalDownCommand())
	return cmd
}

type localUpOptions struct {
	members     int
	pullMembers int
	kubeconfig  string
	stateDir    string
	binDir      string
	nodes       int
	nodeCPU     string
	nodeMemory  string
	nodePods    string
	verbosity   int
	samples     []string
	estimators  bool
}

func newLocalUpCommand() *cobra.Command {
	o := localUpOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local federation and keep it running until interrupted",
		Long: `Starts, on 127.0.0.1, a control-plane API server (context karmada-apiserver)
with Flotilla's CRDs and member clusters member1 … memberN, each registered as a
Push-mode Cluster (and, with --pull-members, further members registered in Pull
mode by their agents), with Flotilla's admission webhook in the control plane's path
(logs/karmada-apiserver/webhook.log), runs Flotilla's controller-manager and
scheduler against it, writes a kubeconfig with a context per cluster and runs
in the foreground until Ctrl-C, SIGTERM or ` + "`flotillactl local down`" + `, then stops everything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.members, "members", 3, "number of member clusters")
	f.IntVar(&o.pullMembers, "pull-members", 0, "number of further member clusters in Pull mode, each with its agent running in this process (logs/<member>/agent.log)")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "where to write the kubeconfig (default <state-dir>/kubeconfig)")
	f.StringVar(&o.stateDir, "state-dir", "", "directory of the state file, logs and data (default $HOME/.flotilla/local)")
	f.StringVar(&o.binDir, "bin-dir", "", "directory of kube-apiserver, etcd, kwok, ... (default $KUBEBUILDER_ASSETS, else bin/k8s/"+localfed.KubeVersion+" of the repository)")
	f.IntVar(&o.nodes, "nodes", 3, "fake nodes per member")
	f.StringVar(&o.nodeCPU, "node-cpu", "8", "CPU capacity of each node")
	f.StringVar(&o.nodeMemory, "node-memory", "32Gi", "memory capacity of each node")
	f.StringVar(&o.nodePods, "node-pods", "110", "pod capacity of each node")
	f.StringArrayVar(&o.samples, "sample", nil, "manifests to apply once the federation runs (repeatable); their member-side result and aggregated status are printed")
	f.BoolVar(&o.estimators, "estimators", false, "also run a scheduler estimator per member and the descheduler; the scheduler asks the estimators how many replicas fit")
	f.IntVarP(&o.verbosity, "verbosity", "v", 0, "log verbosity (1 shows each process and cluster as it starts)")
	return cmd
}

func (o *localUpOptions) run(ctx context.Context, out io.Writer) error {
	opts, err := o.federationOptions()
	if err != nil {
		return err
	}
	if opts.BinDir, err = localfed.ResolveBinDir(o.binDir); err != nil {
		return err
	}
	stateDir, err := resolveStateDir(o.stateDir)
	if err != nil {
		return err
	}
	if o.kubeconfig == "" {
		o.kubeconfig = filepath.Join(stateDir, "kubeconfig")
	}
	if o.kubeconfig, err = filepath.Abs(o.kubeconfig); err != nil {
		return fmt.Errorf("resolving --kubeconfig: %w", err)
	}
	if st, err := readState(stateDir); err == nil && processAlive(st) {
		return fmt.Errorf("a local federation is already running (pid %d, kubeconfig %s); stop it with `flotillactl local down`", st.PID, st.Kubeconfig)
	}
	// Each run starts from scratch; the previous run's logs go with it.
	opts.WorkDir = filepath.Join(stateDir, "run")
	if err := os.RemoveAll(opts.WorkDir); err != nil {
		return fmt.Errorf("removing the previous run: %w", err)
	}
	opts.KubeconfigPath = o.kubeconfig

	// Recorded before starting, so that `local down` can also stop a start
	// in progress: SIGTERM cancels ctx, and Start stops what it began.
	self, err := procStart(os.Getpid())
	if err != nil {
		return fmt.Errorf("reading this process's start time: %w", err)
	}
	if err := writeState(stateDir, localState{
		PID:        os.Getpid(),
		Kubeconfig: opts.KubeconfigPath,
		WorkDir:    opts.WorkDir,
		Started:    time.Now(),
		ProcStart:  self,
	}); err != nil {
		return err
	}
	defer func() { _ = removeState(stateDir) }()

	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(o.verbosity), textlogger.Output(os.Stderr)))
	ctx = log.IntoContext(ctx, logger)
	// Parts of controller-runtime log through its process-wide logger (the
	// in-process webhook's certificate watcher); unset, it prints a stack
	// trace at the user instead.
	log.SetLogger(logger)
	printf(out, "Starting a local federation with %d member(s) and %d Pull member(s); logs in %s\n", opts.Members, opts.PullMembers, filepath.Join(opts.WorkDir, "logs"))
	fed, err := localfed.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		printf(out, "Stopping the local federation\n")
		if err := fed.Close(); err != nil {
			logger.Error(err, "Some processes had died before the federation was stopped")
		}
		printf(out, "Stopped\n")
	}()
	components, err := startComponents(ctx, fed, o.estimators)
	if err != nil {
		return err
	}
	printUsage(out, fed)
	for _, path := range o.samples {
		if err := showSample(ctx, out, fed, path); err != nil {
			return fmt.Errorf("sample %s: %w", path, err)
		}
	}
	select {
	case <-ctx.Done():
		return <-components
	case err := <-components:
		// A component that stops on its own takes the federation down with
		// it: a control plane without its controllers would only mislead.
		return fmt.Errorf("a federation component stopped: %w", err)
	}
}

// startComponents runs the controller-manager and the scheduler in this
// process against the control plane, logging to <logs>/karmada-apiserver/;
// with estimators also the descheduler, and a scheduler estimator per member
// logging to <logs>/<member>/scheduler-estimator.log. The returned channel
// yields once all have stopped, or as soon as one fails.
func startComponents(ctx context.Context, fed *localfed.Federation, estimators bool) (<-chan error, error) {
	cmOpts, err := cmapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0")
	if err != nil {
		return nil, err
	}
	// The command tests run several federations, each with its own
	// controller-manager, in one process.
	cmOpts.Restartable = true
	schedArgs := []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}
	if estimators {
		schedArgs = append(schedArgs, "--enable-scheduler-estimator")
	}
	schedOpts, err := schedapp.ParseOptions(schedArgs...)
	if err != nil {
		return nil, err
	}
	type component struct {
		name, log string
		run       func(context.Context, logr.Logger) error
	}
	controlPlaneLog := func(name string) string {
		return filepath.Join(fed.LogDir(), localfed.ControlPlaneName, name+".log")
	}
	components := []component{
		{"controller-manager", controlPlaneLog("controller-manager"), func(ctx context.Context, l logr.Logger) error {
			return cmapp.Run(ctx, fed.ControlPlane.Config, cmOpts, l)
		}},
		{"scheduler", controlPlaneLog("scheduler"), func(ctx context.Context, l logr.Logger) error {
			return schedapp.Run(ctx, fed.ControlPlane.Config, schedOpts, l)
		}},
	}
	if estimators {
		more, err := estimatorComponents(ctx, fed)
		if err != nil {
			return nil, err
		}
		for _, c := range more {
			components = append(components, component{c.name, c.log, c.run})
		}
		deschedOpts, err := deschedapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0")
		if err != nil {
			return nil, err
		}
		components = append(components, component{"descheduler", controlPlaneLog("descheduler"), func(ctx context.Context, l logr.Logger) error {
			return deschedapp.Run(ctx, fed.ControlPlane.Config, deschedOpts, l)
		}})
	}
	done := make(chan error, len(components))
	for _, c := range components {
		path := c.log
		file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("opening the log of the %s: %w", c.name, err)
		}
		logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(file), textlogger.Verbosity(2)))
		go func() {
			// The component has stopped writing its log; a failed close
			// leaves nothing to do.
			defer func() { _ = file.Close() }()
			err := c.run(log.IntoContext(ctx, logger), logger)
			if err != nil {
				err = fmt.Errorf("%s: %w (log: %s)", c.name, err, path)
			}
			done <- err
		}()
	}
	result := make(chan error, 1)
	go func() {
		var errs []error
		for range components {
			if err := <-done; err != nil {
				errs = append(errs, err)
				if ctx.Err() == nil {
					break
				}
			}
		}
		result <- errors.Join(errs...)
	}()
	return result, nil
}

// estimatorComponent is a member's scheduler estimator, run in-process.
type estimatorComponent struct {
	name, log string
	run       func(context.Context, logr.Logger) error
}

// estimatorComponents listens for each member's estimator on a free local
// port and points the member's estimator Service in the control plane at it,
// so the scheduler and the descheduler find it as they would in a cluster.
func estimatorComponents(ctx context.Context, fed *localfed.Federation) ([]estimatorComponent, error) {
	var out []estimatorComponent
	for _, m := range fed.Members {
		opts, err := estimatorapp.ParseOptions("--cluster-name="+m.Name, "--health-probe-bind-address=0")
		if err != nil {
			return nil, err
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("listening for the estimator of %s: %w", m.Name, err)
		}
		if err := fed.RegisterEstimator(ctx, m.Name, lis.Addr().String()); err != nil {
			_ = lis.Close()
			return nil, err
		}
		opts.Listener = lis
		out = append(out, estimatorComponent{
			name: "scheduler-estimator of " + m.Name,
			log:  filepath.Join(fed.LogDir(), m.Name, "scheduler-estimator.log"),
			run: func(ctx context.Context, l logr.Logger) error {
				return estimatorapp.Run(ctx, m.Config, opts, l)
			},
		})
	}
	return out, nil
}

func (o *localUpOptions) federationOptions() (localfed.Options, error) {
	if o.pullMembers < 0 {
		return localfed.Options{}, fmt.Errorf("--pull-members must not be negative, got %d", o.pullMembers)
	}
	// Clusters and their proxy come from the aggregated API server, as in
	// Karmada, so that get/describe --operation-scope members work; pod
	// and node metrics from every member, and the control plane's from the
	// metrics adapter, so that kubectl top and autoscaling work.
	opts := localfed.Options{Members: o.members, PullMembers: o.pullMembers, BinDir: o.binDir, AggregatedAPIServer: true,
		Metrics: true, MetricsAdapter: true}
	opts.Nodes.Count = o.nodes
	for flag, q := range map[string]struct {
		value string
		into  *resource.Quantity
	}{
		"--node-cpu":    {o.nodeCPU, &opts.Nodes.CPU},
		"--node-memory": {o.nodeMemory, &opts.Nodes.Memory},
		"--node-pods":   {o.nodePods, &opts.Nodes.Pods},
	} {
		v, err := resource.ParseQuantity(q.value)
		if err != nil {
			return opts, fmt.Errorf("%s %q: %w", flag, q.value, err)
		}
		*q.into = v
	}
	return opts, nil
}

func printUsage(out io.Writer, fed *localfed.Federation) {
	contexts := append([]string{localfed.ControlPlaneName}, fed.MemberNames()...)
	memberExample := ""
	if len(fed.Members) > 0 {
		memberExample = "  kubectl --context " + fed.Members[0].Name + " get nodes\n"
	}
	printf(out, `
Local federation ready in %s.

  export KUBECONFIG=%s
  kubectl --context %s get clusters
%s
Contexts: %s
Logs:     %s
Stop with Ctrl-C, or `+"`flotillactl local down`"+` from another shell.
`, fed.StartupTime.Round(100*time.Millisecond), fed.KubeconfigPath, localfed.ControlPlaneName,
		memberExample, strings.Join(contexts, ", "), fed.LogDir())
}

func newLocalDownCommand() *cobra.Command {
	var stateDir string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the local federation started by `flotillactl local up`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return localDown(cmd.Context(), cmd.OutOrStdout(), stateDir, timeout)
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "directory of the state file (default $HOME/.flotilla/local)")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for a clean stop before killing")
	return cmd
}

func localDown(ctx context.Context, out io.Writer, stateDir string, timeout time.Duration) error {
	stateDir, err := resolveStateDir(stateDir)
	if err != nil {
		return err
	}
	st, err := readState(stateDir)
	if errors.Is(err, os.ErrNotExist) {
		printf(out, "No local federation is running\n")
		return nil
	}
	if err != nil {
		return err
	}
	if !processAlive(st) {
		printf(out, "The local federation (pid %d) is not running any more\n", st.PID)
		return removeState(stateDir)
	}
	printf(out, "Stopping the local federation (pid %d)\n", st.PID)
	// `up` stops every process it started on SIGTERM; if it does not manage in
	// time, SIGKILL ends it, and its children die with it (Pdeathsig).
	if err := syscall.Kill(st.PID, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signalling pid %d: %w", st.PID, err)
	}
	if !waitExit(ctx, st, timeout) {
		printf(out, "Still running after %s; killing pid %d\n", timeout, st.PID)
		_ = syscall.Kill(st.PID, syscall.SIGKILL)
		if !waitExit(ctx, st, 10*time.Second) {
			return fmt.Errorf("pid %d did not exit", st.PID)
		}
	}
	_ = removeState(stateDir)
	printf(out, "Stopped\n")
	return nil
}

// waitExit polls until the process of st is gone or timeout passes.
func waitExit(ctx context.Context, st localState, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for processAlive(st) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// printf writes to the user's terminal, where a failed write leaves nothing
// to do.
func printf(out io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(out, format, args...)
}
