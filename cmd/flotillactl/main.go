// Command flotillactl is Flotilla's command line: `flotillactl local up` runs a
// whole federation on this machine.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/internal/release"
)

func main() {
	// Ctrl-C and SIGTERM (from `flotillactl local down`) cancel the context,
	// which commands treat as the request to stop cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		stop()
		os.Exit(1)
	}
}

// pluginName is the binary's name as a kubectl plugin: kubectl runs
// kubectl-flotilla for `kubectl flotilla ...`.
const pluginName = "kubectl-flotilla"

// commandName is how the user called the binary: as flotillactl, or
// through kubectl as its plugin, so that help shows what to type.
func commandName(arg0 string) string {
	if strings.TrimSuffix(filepath.Base(arg0), ".exe") == pluginName {
		return "kubectl flotilla"
	}
	return "flotillactl"
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           commandName(os.Args[0]),
		Short:         "Flotilla's command line",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Version gives the root command --version; it prints the release
		// alone, as the components' --version does.
		Version: release.Version,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newVersionCommand())
	root.AddCommand(newLocalCommand())
	root.AddCommand(newInterpretCommand())
	root.AddCommand(newCordonCommand(true), newCordonCommand(false), newTaintCommand())
	root.AddCommand(newInitCommand(), newDeinitCommand())
	root.AddCommand(newJoinCommand(), newUnjoinCommand())
	root.AddCommand(newTokenCommand(), newRegisterCommand(), newUnregisterCommand())
	root.AddCommand(newGetCommand(), newDescribeCommand(), newPromoteCommand(), newApplyCommand(), newTopCommand())
	root.AddCommand(newLogsCommand(), newExecCommand(), newAttachCommand())
	root.AddCommand(controlPlaneKubectlCommands()...)
	return root
}
