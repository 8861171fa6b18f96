package main

import (
	"time"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/cmd/exec"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/completion"
)

// execPodRunningTimeout is kubectl exec's default wait for a running pod.
const execPodRunningTimeout = 60 * time.Second

func newExecCommand() *cobra.Command {
	var target memberPod
	o := &exec.ExecOptions{}
	cmd := &cobra.Command{
		Use:                   "exec (POD | TYPE/NAME) [-c CONTAINER] -C CLUSTER [flags] -- COMMAND [args...]",
		DisableFlagsInUseLine: true,
		Short:                 "Execute a command in a container of a pod in a member cluster",
		Long: `Execute a command in a container of a pod, or of a resource's pod, in a member
cluster, as kubectl exec does, through the control plane's cluster proxy: the
member decides whether the kubeconfig's user may.`,
		Example: `  # Run date in the pod web-0 of member1
  flotillactl exec web-0 -C member1 -- date

  # An interactive shell in a Deployment's pod in member2
  flotillactl exec -it deployment/web -n shop -C member2 -- sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := target.factory(cmd.Context())
			if err != nil {
				return err
			}
			o.IOStreams = streamsOf(cmd)
			o.Executor = contextExecutor{cmd.Context()}
			if err := o.Complete(f, cmd, args, cmd.ArgsLenAtDash()); err != nil {
				return target.explain(err)
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return target.explainRun(cmd.Context(), o.Run())
		},
	}
	cmdutil.AddPodRunningTimeoutFlag(cmd, execPodRunningTimeout)
	cmdutil.AddJsonFilenameFlag(cmd.Flags(), &o.Filenames, "to use to exec into the resource")
	cmdutil.AddContainerVarFlags(cmd, &o.ContainerName, o.ContainerName)
	cmd.Flags().BoolVarP(&o.Stdin, "stdin", "i", o.Stdin, "Pass stdin to the container")
	cmd.Flags().BoolVarP(&o.TTY, "tty", "t", o.TTY, "Stdin is a TTY")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", o.Quiet, "Only print output from the remote session")
	target.addFlags(cmd)
	cmd.ValidArgsFunction = target.completion(completion.PodResourceNameCompletionFunc)
	if err := cmd.RegisterFlagCompletionFunc("container", target.completion(completion.ContainerCompletionFunc)); err != nil {
		panic(err) // the flag is defined just above
	}
	return cmd
}
