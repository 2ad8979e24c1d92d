// Command hello stands in for gitlab-runner-helper, busybox and friends in
// the verify tests: `hello --version` prints an OS/Arch line like GitLab
// Runner's; anything else exits 0.
package main

import (
	"fmt"
	"os"
	"runtime"
)

// osArch can be overridden with -ldflags=-X main.osArch=... to build a binary
// that lies about its target.
var osArch = runtime.GOOS + "/" + runtime.GOARCH

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Printf("Version:      0.0.0-test\nOS/Arch:      %s\n", osArch)
	}
}
