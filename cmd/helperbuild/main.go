// Command helperbuild builds GitLab Runner helper and runner images for many
// CPU architectures and publishes each as one multi-arch tag, with no Docker
// daemon.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// NotifyContext does not say which signal arrived; a second channel
	// does, for the exit code (130 for SIGINT, 143 for SIGTERM).
	which := make(chan os.Signal, 1)
	signal.Notify(which, os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Environ())
	stop()
	if ctx.Err() != nil {
		select {
		case s := <-which:
			code = signalExitCode(s)
		default:
		}
	}
	os.Exit(code)
}

// signalExitCode is the shell's convention: 128 + the signal number.
func signalExitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}
