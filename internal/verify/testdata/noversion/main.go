// Command noversion stands in for the Go programs of an image that have no
// --version, in the verify tests; it behaves as the name it is run under:
//
//	pgrep    takes --version for a pattern, matches nothing: exit 1, silent
//	kubectl  has a version subcommand only: --version is an error on stderr, exit 1
//	flagtool uses package flag: --version is an undefined flag, exit 2
//	anything else prints its usage to stderr and exits 1
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	args := os.Args[1:]
	switch filepath.Base(os.Args[0]) {
	case "pgrep":
		os.Exit(1)
	case "kubectl":
		if len(args) == 1 && args[0] == "version" {
			fmt.Println("Client Version: v0.0.0-test")
			return
		}
		fmt.Fprintln(os.Stderr, "error: unknown flag: --version")
		os.Exit(1)
	case "flagtool":
		fs := flag.NewFlagSet("flagtool", flag.ExitOnError)
		fs.Bool("v", false, "verbose")
		_ = fs.Parse(args)
	default:
		fmt.Fprintln(os.Stderr, "usage: "+filepath.Base(os.Args[0])+" FILE")
		os.Exit(1)
	}
}
