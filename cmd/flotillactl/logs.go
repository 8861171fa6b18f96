package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/kubectl/pkg/cmd/exec"
	"k8s.io/kubectl/pkg/cmd/logs"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/completion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// memberPod is what logs, exec and attach share: kubectl's connection
// flags for the control plane and -C/--cluster, the member the pod is in,
// reached through the control plane's cluster proxy as karmadactl does.
type memberPod struct {
	flags   *genericclioptions.ConfigFlags
	cluster string
}

func (m *memberPod) addFlags(cmd *cobra.Command) {
	m.flags = genericclioptions.NewConfigFlags(true)
	// --cluster names the member here, as in karmadactl; the kubeconfig's
	// cluster is the one of --context.
	m.flags.ClusterName = nil
	m.flags.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&m.cluster, "cluster", "C", "", "The member cluster the pod is in, e.g. -C member1 (required).")
}

// factory checks that the member exists and is Ready, and returns kubectl's
// factory whose API server is the member's proxy: the same user,
// credentials and namespace as against the control plane.
func (m *memberPod) factory(ctx context.Context) (cmdutil.Factory, error) {
	if m.cluster == "" {
		return nil, errors.New("--cluster (-C) is required: name the member cluster the pod is in, e.g. -C member1 (see flotillactl get clusters)")
	}
	c, err := controlPlaneFlags{m.flags}.client()
	if err != nil {
		return nil, err
	}
	var cluster clusterv1alpha1.Cluster
	if err := c.Get(ctx, client.ObjectKey{Name: m.cluster}, &cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("--cluster: %q is not a member cluster (see flotillactl get clusters)", m.cluster)
		}
		return nil, fmt.Errorf("reading cluster %s from the control plane: %w", m.cluster, err)
	}
	if ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady); ready == nil || ready.Status != metav1.ConditionTrue {
		why := "it has reported no Ready condition yet"
		if ready != nil {
			why = fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
		}
		return nil, fmt.Errorf("cluster %s is not Ready (%s); the control plane cannot reach it, try again once flotillactl get clusters %s shows it Ready", m.cluster, why, m.cluster)
	}
	cfg, err := m.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	member := (&getOptions{flags: m.flags}).memberFlags(cfg, m.cluster)
	// The pod's namespace: get and top take theirs from their own flags.
	member.Namespace = m.flags.Namespace
	// MatchVersionFlags give the REST config the defaults of the core
	// API that exec and attach build their REST client from, as in kubectl.
	return cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(member)), nil
}

// completion completes with kubectl's completion function against the
// member of the flags so far; nothing without a Ready member.
func (m *memberPod) completion(complete func(cmdutil.Factory) cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		f, err := m.factory(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return complete(f)(cmd, args, toComplete)
	}
}

// explain says in which member a request failed and, for a pod that is
// not there, how to find the member's pods. Other errors of kubectl's
// checks of flags and arguments are left as they are.
func (m *memberPod) explain(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return m.explainRun(context.Background(), err)
	}
	return err
}

// explainRun is explain for what failed once the command reached the
// member: streams refused or broken there, the pod's containers. A stream
// ended because the command was told to stop (Ctrl-C) is no failure.
func (m *memberPod) explainRun(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return nil
	}
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w in cluster %s (see flotillactl get pods --operation-scope members -C %s)", err, m.cluster, m.cluster)
	}
	return fmt.Errorf("cluster %s: %w", m.cluster, err)
}

// streamsOf are the command's streams as set when it runs (tests set them).
func streamsOf(cmd *cobra.Command) genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}
}

func newLogsCommand() *cobra.Command {
	var target memberPod
	o := logs.NewLogsOptions(genericiooptions.IOStreams{})
	cmd := &cobra.Command{
		Use:                   "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER] -C CLUSTER",
		DisableFlagsInUseLine: true,
		Short:                 "Print the logs of a container in a pod of a member cluster",
		Long: `Print the logs of a container in a pod, or of a resource's pod, in a member
cluster, as kubectl logs does, through the control plane's cluster proxy: the
member decides what the kubeconfig's user may read there.`,
		Example: `  # Logs of the pod web-0 in member1
  flotillactl logs web-0 -C member1

  # Follow the logs of a Deployment's pod in member2
  flotillactl logs -f deployment/web -n shop -C member2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := target.factory(cmd.Context())
			if err != nil {
				return err
			}
			o.IOStreams = streamsOf(cmd)
			if err := o.Complete(f, cmd, args); err != nil {
				return target.explain(err)
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return target.explainRun(cmd.Context(), o.RunLogsContext(cmd.Context()))
		},
	}
	cmd.ValidArgsFunction = target.completion(completion.PodResourceNameAndContainerCompletionFunc)
	o.AddFlags(cmd)
	target.addFlags(cmd)
	return cmd
}

// contextExecutor runs exec and attach streams until the command's
// context ends (Ctrl-C), over kubectl's own transports: WebSocket, falling
// back to SPDY.
type contextExecutor struct {
	ctx context.Context
}

func (e contextExecutor) Execute(u *url.URL, cfg *rest.Config, stdin io.Reader, stdout, stderr io.Writer, tty bool, sizes remotecommand.TerminalSizeQueue) error {
	return e.ExecuteWithContext(e.ctx, u, cfg, stdin, stdout, stderr, tty, sizes)
}

func (e contextExecutor) ExecuteWithContext(ctx context.Context, u *url.URL, cfg *rest.Config, stdin io.Reader, stdout, stderr io.Writer, tty bool, sizes remotecommand.TerminalSizeQueue) error {
	return (&exec.DefaultRemoteExecutor{}).ExecuteWithContext(ctx, u, cfg, stdin, stdout, stderr, tty, sizes)
}

// Attach streams an attach request the way Execute streams an exec one.
func (e contextExecutor) Attach(u *url.URL, cfg *rest.Config, stdin io.Reader, stdout, stderr io.Writer, tty bool, sizes remotecommand.TerminalSizeQueue) error {
	return e.ExecuteWithContext(e.ctx, u, cfg, stdin, stdout, stderr, tty, sizes)
}
