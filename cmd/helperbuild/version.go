package main

import (
	"fmt"
	"io"
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
			_, err := io.WriteString(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}

// versionText is what `helperbuild version` and `helperbuild --version` print.
func versionText() string {
	return fmt.Sprintf("Version:      %s\nGit revision: %s\nGO version:   %s\nOS/Arch:      %s/%s\n",
		version, revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
