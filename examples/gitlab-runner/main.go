// Command gitlab-runner is a stand-in for GitLab Runner's main binary, shaped
// like it (version variables in package common, --version output) so
// helperbuild's example can build and containerize it offline.
package main

import (
	"fmt"
	"os"

	"example.com/gitlab-runner/common"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gitlab-runner [--version] COMMAND")
		os.Exit(2)
	}
	switch cmd := os.Args[1]; cmd {
	case "--version", "-v", "version":
		fmt.Print(common.VersionText())
	case "run", "register", "unregister", "verify", "list":
		fmt.Printf("gitlab-runner %s: %s is a stub in this example\n", common.VERSION, cmd)
	default:
		fmt.Fprintf(os.Stderr, "gitlab-runner: unknown command %q\n", cmd)
		os.Exit(2)
	}
}
