package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/internal/release"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the Flotilla release of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), release.Version)
			return err
		},
	}
}
