package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// Set with -ldflags "-X main.version=... -X main.revision=...".
var (
	version  = "dev"
	revision = "unknown"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print helperbuild's version, revision and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Version:      %s\n", version)
			fmt.Fprintf(w, "Git revision: %s\n", revision)
			fmt.Fprintf(w, "GO version:   %s\n", runtime.Version())
			fmt.Fprintf(w, "OS/Arch:      %s/%s\n", runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
