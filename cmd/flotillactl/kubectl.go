package main

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd/annotate"
	"k8s.io/kubectl/pkg/cmd/apiresources"
	"k8s.io/kubectl/pkg/cmd/create"
	"k8s.io/kubectl/pkg/cmd/delete"
	"k8s.io/kubectl/pkg/cmd/edit"
	"k8s.io/kubectl/pkg/cmd/explain"
	"k8s.io/kubectl/pkg/cmd/label"
	"k8s.io/kubectl/pkg/cmd/patch"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// controlPlaneKubectlCommands are kubectl's own commands against the
// control plane, as karmadactl offers them: the same flags, output and
// errors a kubectl user knows, with kubectl's connection flags.
func controlPlaneKubectlCommands() []*cobra.Command {
	type newCommand func(f cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command
	var out []*cobra.Command
	for _, build := range []newCommand{
		label.NewCmdLabel,
		func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
			return annotate.NewCmdAnnotate("flotillactl", f, s)
		},
		patch.NewCmdPatch,
		edit.NewCmdEdit,
		create.NewCmdCreate,
		delete.NewCmdDelete,
		func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
			return explain.NewCmdExplain("flotillactl", f, s)
		},
		func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
			return apiresources.NewCmdAPIResources(f, s)
		},
	} {
		flags := genericclioptions.NewConfigFlags(true).WithDeprecatedPasswordFlag().WithDiscoveryBurst(300).WithDiscoveryQPS(50.0)
		var cmd *cobra.Command
		// kubectl's commands keep the streams they are built with; these
		// find the command's own, as set when it runs (tests set them).
		streams := genericiooptions.IOStreams{
			In:     lazyReader{func() io.Reader { return cmd.InOrStdin() }},
			Out:    lazyWriter{func() io.Writer { return cmd.OutOrStdout() }},
			ErrOut: lazyWriter{func() io.Writer { return cmd.ErrOrStderr() }},
		}
		cmd = build(cmdutil.NewFactory(flags), streams)
		// Persistent, so that create's subcommands (create configmap, ...)
		// take them too.
		flags.AddFlags(cmd.PersistentFlags())
		out = append(out, cmd)
	}
	return out
}

type lazyWriter struct{ w func() io.Writer }

func (l lazyWriter) Write(p []byte) (int, error) { return l.w().Write(p) }

type lazyReader struct{ r func() io.Reader }

func (l lazyReader) Read(p []byte) (int, error) { return l.r().Read(p) }
