package main

import (
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd/attach"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/completion"
)

const (
	// attachPodRunningTimeout is kubectl attach's default wait for a
	// running pod.
	attachPodRunningTimeout = 60 * time.Second
	// defaultDetachKeys is kubectl attach's key sequence for detaching.
	defaultDetachKeys = "ctrl-p,ctrl-q"
)

func newAttachCommand() *cobra.Command {
	var target memberPod
	o := attach.NewAttachOptions(genericiooptions.IOStreams{})
	cmd := &cobra.Command{
		Use:                   "attach (POD | TYPE/NAME) [-c CONTAINER] -C CLUSTER",
		DisableFlagsInUseLine: true,
		Short:                 "Attach to a running container of a pod in a member cluster",
		Long: `Attach to a process already running in a container of a pod, or of a
resource's pod, in a member cluster, as kubectl attach does, through the
control plane's cluster proxy: the member decides whether the kubeconfig's
user may. Ctrl-C ends it.`,
		Example: `  # Output of the pod web-0 in member1 as it comes
  flotillactl attach web-0 -C member1

  # Stdin and a TTY to a Deployment's pod in member2
  flotillactl attach -it deployment/web -n shop -C member2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := target.factory(cmd.Context())
			if err != nil {
				return err
			}
			o.IOStreams = streamsOf(cmd)
			o.Attach = contextExecutor{cmd.Context()}
			if err := o.Complete(f, cmd, args); err != nil {
				return target.explain(err)
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return target.explainRun(cmd.Context(), o.Run())
		},
	}
	cmdutil.AddPodRunningTimeoutFlag(cmd, attachPodRunningTimeout)
	cmdutil.AddContainerVarFlags(cmd, &o.ContainerName, o.ContainerName)
	cmd.Flags().BoolVarP(&o.Stdin, "stdin", "i", o.Stdin, "Pass stdin to the container")
	cmd.Flags().BoolVarP(&o.TTY, "tty", "t", o.TTY, "Stdin is a TTY")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", o.Quiet, "Only print output from the remote session")
	cmd.Flags().StringVar(&o.DetachKeys, "detach-keys", defaultDetachKeys, "Override the key sequence for detaching a container")
	target.addFlags(cmd)
	cmd.ValidArgsFunction = target.completion(completion.PodResourceNameCompletionFunc)
	if err := cmd.RegisterFlagCompletionFunc("container", target.completion(completion.ContainerCompletionFunc)); err != nil {
		panic(err) // the flag is defined just above
	}
	return cmd
}
