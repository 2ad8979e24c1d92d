package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set with -ldflags "-X main.version=... -X main.revision=...".
var (
	version  = "dev"
	revision = "unknown"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print helperbuild's version, revision and Go version",
		Example: "  helperbuild version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}

// versionText is what `helperbuild version` and `helperbuild --version` print.
func versionText() string {
	v, rev := stamp()
	return fmt.Sprintf("Version:      %s\nGit revision: %s\nGO version:   %s\nOS/Arch:      %s/%s\n",
		v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// stamp is helperbuild's version and revision: the -ldflags ones, else what
// Go recorded in the binary (the module version of a go install ...@vX.Y.Z,
// the commit of a build in a git checkout).
func stamp() (v, rev string) {
	v, rev = version, revision
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v, rev
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && rev == "unknown" {
			rev = s.Value
		}
	}
	return v, rev
}
