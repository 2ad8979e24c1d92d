package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitInterrupted is SIGINT's; main turns SIGTERM into 143.
	exitInterrupted = 130
)

// usageError marks an error in how helperbuild was called (exit 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Run executes helperbuild with args and returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	root := NewRootCmd(Env(environ))
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " | ")
	fmt.Fprintln(stderr, "helperbuild: "+msg)
	var u usageError
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.As(err, &u):
		return exitUsage
	}
	return exitFailure
}

// NewRootCmd returns the helperbuild command tree. env is the process
// environment; nothing below reads os.Getenv.
func NewRootCmd(env Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "helperbuild",
		Short: "Build GitLab Runner helper and runner images for every architecture, publish one multi-arch tag",
		Long: `helperbuild cross-compiles Go binaries for many platforms, writes OCI layers
directly (no Docker daemon, no QEMU) and publishes one OCI image index per image,
so every node of a mixed-architecture cluster pulls its native build from one tag.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(newBuildCmd(env, false), newBuildCmd(env, true), newVerifyCmd(env), newVersionCmd())
	return root
}

// logger writes progress to stderr as plain key=value lines.
func logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}
