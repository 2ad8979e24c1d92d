// Command gitlab-runner-helper is a stand-in for GitLab Runner's helper
// binary: it prints the same --version block and knows the subcommand names
// the runner invokes, without implementing them.
package main

import (
	"fmt"
	"os"

	"example.com/gitlab-runner/common"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gitlab-runner-helper [--version] COMMAND")
		os.Exit(2)
	}
	switch cmd := os.Args[1]; cmd {
	case "--version", "-v", "version":
		fmt.Print(common.VersionText())
	case "artifacts-downloader", "artifacts-uploader", "cache-archiver", "cache-extractor",
		"cache-init", "health-check", "proxy-exec", "read-logs", "steps":
		fmt.Fprintf(os.Stderr, "gitlab-runner-helper: %s is not implemented in this example\n", cmd)
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "gitlab-runner-helper: unknown command %q\n", cmd)
		os.Exit(2)
	}
}
