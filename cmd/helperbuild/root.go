package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/release"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitNotFound: a reference the registry or layout does not hold.
	exitNotFound = 3
	// exitInterrupted is for a cancelled run whose cause names no signal.
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
	env := Env(environ)
	return runRoot(ctx, env, NewRootCmd(env), args, stdout, stderr)
}

// runRoot executes root with args: errors become one line on stderr and an
// exit code.
func runRoot(ctx context.Context, env Env, root *cobra.Command, args []string, stdout, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "helperbuild: "+errorLine(ctx, env, err))
	var u usageError
	var input *release.InputError
	switch {
	case ctx.Err() != nil:
		return interruptedCode(ctx)
	case errors.As(err, &u), errors.As(err, &input):
		return exitUsage
	case release.NotFound(err):
		return exitNotFound
	}
	return exitFailure
}

// interruptedCode is the exit code of a run whose context was cancelled:
// 128+N when the cause carries signal N (main cancels with the signal: 130
// for SIGINT, 143 for SIGTERM), else exitInterrupted.
func interruptedCode(ctx context.Context) int {
	var s interface{ Signal() os.Signal }
	if errors.As(context.Cause(ctx), &s) {
		if n, ok := s.Signal().(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return exitInterrupted
}

// NewRootCmd returns the helperbuild command tree. env is the process
// environment; nothing below reads os.Getenv.
func NewRootCmd(env Env) *cobra.Command {
	return newRootCmd(env, (*buildRun).execute)
}

// newRootCmd is NewRootCmd with build and push running their prepared
// inputs through exec.
func newRootCmd(env Env, exec buildExec) *cobra.Command {
	root := &cobra.Command{
		Use:   "helperbuild",
		Short: "Build GitLab Runner helper and runner images for every architecture, publish one multi-arch tag",
		Long: `helperbuild cross-compiles Go binaries for many platforms, writes OCI layers
directly (no Docker daemon, no QEMU) and publishes one OCI image index per image,
so every node of a mixed-architecture cluster pulls its native build from one tag.

Exit codes: 0 done; 1 failed (a check, a build, the registry); 2 usage error (a
flag, or an output that cannot be written: nothing was done); 3 a reference not
found (a tag, digest, layout or layout entry that is not there); 130/143 interrupted.`,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
		SilenceErrors:              true,
		// --version prints what `helperbuild version` does.
		Version: version,
		Example: `  helperbuild init
  helperbuild build --platforms linux/amd64,linux/arm64
  helperbuild push --repo registry.example.com/group
  helperbuild verify registry.example.com/group/gitlab-runner-helper:v1.2.3`,
	}
	// --version only at the root, with no -v: -v is a command's --verbose.
	root.Flags().Bool("version", false, "print helperbuild's version")
	root.SetVersionTemplate(strings.ReplaceAll(versionText(), "{{", `{{"{{"}}`))
	// An unknown command is a usage error (cobra's own is a plain error).
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return cmd.Help()
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// cobra parses the root's flags before it finds the command
		// missing: in "biuld --platforms X" the mistake is the command,
		// not the flag that belongs to it.
		if args := c.Flags().Args(); !c.HasParent() && len(args) > 0 {
			return unknownCommand(c, args[0])
		}
		return usageError{fmt.Errorf("%w%s (see %s --help)", err, flagHint(c, err), c.CommandPath())}
	})
	root.AddCommand(newBuildCmd(env, false, exec), newBuildCmd(env, true, exec), newMergeCmd(env), newIndexCmd(env), newVerifyCmd(env), newInitCmd(env), newVersionCmd())
	return root
}

// unknownCommand is the usage error for a first word that is no command,
// with the nearest command when one is close.
func unknownCommand(root *cobra.Command, word string) error {
	hint := ""
	if s := root.SuggestionsFor(word); len(s) > 0 {
		hint = fmt.Sprintf("; did you mean %s?", s[0])
	}
	return usagef("unknown command %q%s (see %s --help)", word, hint, root.CommandPath())
}

// flagHint is the way out of a flag error: the nearest flag for a typo,
// where -v goes when given before the command.
func flagHint(c *cobra.Command, err error) string {
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		var names []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if n := platform.Nearest(name, names); n != "" {
			return "; did you mean --" + n + "?"
		}
	}
	if !c.HasParent() && strings.Contains(err.Error(), "'v' in -v") {
		return "; -v (--verbose) goes after the command, e.g. helperbuild build -v; the version is helperbuild --version"
	}
	return ""
}
