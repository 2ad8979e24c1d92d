//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every process the suite starts gets SIGKILL from the kernel when the test binary dies
// (Pdeathsig), so a crash or a -timeout panic cannot leave a registry or containerd running.
// Long-running daemons are started from TestMain's goroutine, which is locked to its OS
// thread for the whole run: Pdeathsig fires when the *thread* that started a child exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Pdeathsig: syscall.SIGKILL,
		Setpgid:   true, // a Ctrl-C reaches the test binary only; teardown then stops the rest
	}
}

// daemon is a long-running process (a registry, containerd) with its output in a log file.
type daemon struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed once the process has exited; waitErr is then set
	waitErr error
}

// startDaemon starts argv with its stdout and stderr appended to logPath.
func startDaemon(name, logPath string, env []string, argv ...string) (*daemon, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		d.waitErr = cmd.Wait()
		logFile.Close()
		close(d.exited)
	}()
	return d, nil
}

// running reports whether the process has not exited yet.
func (d *daemon) running() bool {
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the daemon's PID, waits up to grace, then sends SIGKILL.
func (d *daemon) stop(grace time.Duration) error {
	if !d.running() {
		return nil
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		return nil
	case <-time.After(grace):
	}
	_ = d.cmd.Process.Kill()
	select {
	case <-d.exited:
		return fmt.Errorf("%s (pid %d) ignored SIGTERM for %s and was killed", d.name, d.cmd.Process.Pid, grace)
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL", d.name, d.cmd.Process.Pid)
	}
}

// logTail returns the last lines of the daemon's log, for error messages.
func (d *daemon) logTail() string {
	b, err := os.ReadFile(d.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// pollUntil calls ready every interval until it reports true, the daemon exits, or tries
// run out. It is how the suite waits for a daemon: bounded, and never a fixed sleep.
func (d *daemon) pollUntil(tries int, interval time.Duration, ready func() (bool, error)) error {
	var lastErr error
	for i := 0; i < tries; i++ {
		ok, err := ready()
		if ok {
			return nil
		}
		lastErr = err
		select {
		case <-d.exited:
			return fmt.Errorf("%s exited during start-up (%v); log:\n%s", d.name, d.waitErr, d.logTail())
		case <-time.After(interval):
		}
	}
	return fmt.Errorf("%s not ready after %s (last error: %v); log:\n%s",
		d.name, time.Duration(tries)*interval, lastErr, d.logTail())
}

// result is what a finished command left behind.
type result struct {
	Argv     []string
	Stdout   string
	Stderr   string
	ExitCode int // -1 if the process was killed by a signal (e.g. on timeout)
	Duration time.Duration
}

// String shows the command and its output, for failure messages.
func (r result) String() string {
	return fmt.Sprintf("$ %s\nexit code %d after %s\n--- stdout\n%s\n--- stderr\n%s",
		strings.Join(r.Argv, " "), r.ExitCode, r.Duration.Round(time.Millisecond),
		clip(r.Stdout), clip(r.Stderr))
}

// clip shortens long command output in failure messages.
func clip(s string) string {
	const max = 8000
	if len(s) <= max {
		return s
	}
	return s[:max/2] + "\n...[clipped]...\n" + s[len(s)-max/2:]
}

// commandTimeout bounds every command a test runs; helperbuild pushes are the slowest.
const commandTimeout = 5 * time.Minute

// command prepares argv to run with the environment env (nil: the test binary's own),
// bounded by commandTimeout and by the test's context.
func command(t testing.TB, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	return commandWithin(t, commandTimeout, env, argv...)
}

// commandWithin is command bounded by timeout instead, for runs known to take longer.
func commandWithin(t testing.TB, timeout time.Duration, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 10 * time.Second
	// CommandContext would kill only the direct child; kill its process group instead.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// run runs a prepared command and returns its result whatever the exit code; the test fails
// only if the program cannot be started at all.
func run(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	start := time.Now()
	err := cmd.Run()
	r := result{Argv: cmd.Args, Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.ExitCode = exitErr.ExitCode()
	default:
		t.Fatalf("$ %s: %v", strings.Join(cmd.Args, " "), err)
	}
	t.Logf("$ %s  (exit %d, %s)", strings.Join(cmd.Args, " "), r.ExitCode, r.Duration.Round(time.Millisecond))
	return r
}

// mustRun runs a prepared command and fails the test, showing all output, unless it
// exits 0.
func mustRun(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	r := run(t, cmd)
	if r.ExitCode != 0 {
		t.Fatalf("command failed:\n%s", r)
	}
	return r
}

// sh runs argv with the test binary's environment and requires success; the common case.
func sh(t testing.TB, argv ...string) result {
	t.Helper()
	return mustRun(t, command(t, nil, argv...))
}
