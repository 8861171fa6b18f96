// Command flotillactl is Flotilla's command line: `flotillactl local up` runs a
// whole federation on this machine.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
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

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "flotillactl",
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
	root.AddCommand(newJoinCommand(), newUnjoinCommand())
	root.AddCommand(newTokenCommand(), newRegisterCommand(), newUnregisterCommand())
	root.AddCommand(newGetCommand(), newDescribeCommand(), newPromoteCommand())
	return root
}
