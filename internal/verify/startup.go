package verify

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// startScripts are the project's own stand-ins for the Helm chart's
// ConfigMap scripts and the executors' commands (docs/startup-run.md).
//
//go:embed startscripts
var startScripts embed.FS

func startScript(name string) string {
	b, err := startScripts.ReadFile("startscripts/" + name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return string(b)
}

// errStepTimeout stops a start-up step that runs past its time limit.
var errStepTimeout = errors.New("step timed out")

// startCmd is one command of a start-up run: the image started once, in a
// sandbox of its own, as the chart or an executor starts it.
type startCmd struct {
	label string // "runner start-up"
	first string // the step before the scripts name one: the command itself
	path  string
	args  []string
	stdin string
	user  *sandbox.User
	mount []sandbox.Mount
	env   []string
	// last is the step the command must reach to pass.
	last string
	// version: the command's last step must print gitlab-runner's
	// "Version:" line and an OS/Arch of the platform.
	version bool
}

// userName is how a finding names who ran a step.
func (c startCmd) userName() string {
	if c.user == nil {
		return "root"
	}
	return fmt.Sprintf("uid %d", c.user.UID)
}

// start runs c and records a failure of its step in r.start; the error is
// a sandbox that cannot be made.
func (r *runCheck) start(ctx context.Context, c startCmd) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, 6*r.timeout) // every step has r.timeout; the steps together this
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	log := newStepLog(c.first, func() { stop(errTooMuchOutput) })
	done := make(chan struct{})
	defer close(done)
	go stepTimer(r.timeout, log.steps, done, func() { stop(errStepTimeout) })

	env := append(append([]string{}, r.env...), c.env...)
	spec := sandbox.Spec{Root: r.rootfs, Path: c.path, Args: c.args, Env: env, Emulator: r.qemu, Limits: r.limits,
		Stdout: log, Stderr: log, User: c.user, Mounts: c.mount, Binfmt: r.binfmt}
	if c.stdin != "" {
		spec.Stdin = strings.NewReader(c.stdin)
	}
	err := r.sandbox.Run(ctx, spec)
	step, out, steps := log.state()
	res := StepResult{Step: step, User: c.userName(), Status: -1, Output: lastLines(out, 5)}
	var exit *exec.ExitError
	var execErr *sandbox.ExecError
	why := ""
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		return err
	case parent.Err() != nil:
		return parent.Err()
	case errors.Is(context.Cause(ctx), errStepTimeout):
		why = fmt.Sprintf("did not finish within %s", r.timeout)
	case errors.Is(context.Cause(ctx), errTooMuchOutput):
		why = "printed more than " + formatBytes(outputLimit) + " and was stopped"
	case ctx.Err() != nil:
		why = fmt.Sprintf("the start-up did not finish within %s", 6*r.timeout)
	case errors.As(err, &execErr):
		why = execErr.Error()
	case errors.As(err, &exit):
		res.Status = exit.ExitCode()
		why = exitReason(exit)
	case err != nil:
		why = err.Error()
	case steps[len(steps)-1] != c.last:
		res.Status = 0
		why = "exited with status 0 before its step " + c.last
	case c.version:
		var at string
		if at, why = r.versionProblem(log.versionLines()); at != "" {
			res.Step = at
		}
	}
	if why == "" {
		r.startOK = append(r.startOK, c.label)
		return nil
	}
	r.startFailed(c, res, why)
	return nil
}

// startFailed records a failed step: "runner start-up: STEP: LAST LINE
// (uid 100, exit status 1)".
func (r *runCheck) startFailed(c startCmd, res StepResult, why string) {
	last := lastLines(res.Output, 1)
	msg := c.label + ": " + res.Step + ": "
	if last != "" {
		msg += last + " (" + res.User + ", " + why + ")"
	} else {
		msg += why + " (" + res.User + ")"
	}
	r.sf.checks = append(r.sf.checks, Check{Name: CheckStart, Reason: msg, StepResult: res})
	r.sf.failed = true
}

// versionProblem says what is wrong with the version lines of a command
// that runs gitlab-runner(-helper) --version: no Version: or no OS/Arch:
// line (GitLab's programs print both, docs/gitlab-image-contract.md), or
// an OS/Arch of another platform (with the step that printed it); "" when
// they are right.
func (r *runCheck) versionProblem(lines [][2]string) (step, why string) {
	want := r.platform.OS + "/" + r.platform.Architecture
	seen, arch := false, false
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l[1], "OS/Arch:"); ok && strings.TrimSpace(v) != want {
			return l[0], fmt.Sprintf("says OS/Arch %s, want %s", strings.TrimSpace(v), want)
		}
		seen = seen || strings.HasPrefix(l[1], "Version:")
		arch = arch || strings.HasPrefix(l[1], "OS/Arch:")
	}
	if !seen {
		return "", "printed no Version: line"
	}
	if !arch {
		return "", "printed no OS/Arch: line, so nothing shows the image holds this platform's build"
	}
	return "", ""
}

// stepTimer calls expire when no new step begins within limit of the last.
func stepTimer(limit time.Duration, steps <-chan string, done <-chan struct{}, expire func()) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-steps:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
			t.Reset(limit)
		case <-t.C:
			expire()
			return
		case <-done:
			return
		}
	}
}

// startDirs makes the host side of the start-up runs' mounts under dir:
// the chart's ConfigMap and Secret (read-only) and emptyDir (owned root,
// group 65533, mode 2775: what fsGroup makes of it), the helper's CA file,
// script and log directories.
type startDirs struct {
	configmaps, secrets, configDir, scripts, logs, caFile string
}

func makeStartDirs(dir string) (startDirs, error) {
	d := startDirs{
		configmaps: filepath.Join(dir, "configmaps"), secrets: filepath.Join(dir, "secrets"),
		configDir: filepath.Join(dir, "config-dir"), scripts: filepath.Join(dir, "scripts"),
		logs: filepath.Join(dir, "logs"), caFile: filepath.Join(dir, "ca.crt"),
	}
	files := map[string]string{
		filepath.Join(d.configmaps, "entrypoint"):          startScript("entrypoint"),
		filepath.Join(d.configmaps, "register-the-runner"): startScript("register-the-runner"),
		filepath.Join(d.configmaps, "check-live"):          startScript("check-live"),
		filepath.Join(d.configmaps, "config.toml"):         "concurrent = 1\ncheck_interval = 3\n",
		filepath.Join(d.secrets, "runner-token"):           "glrt-helperbuild-start-up-run",
		filepath.Join(d.scripts, "step_script"):            startScript("step_script"),
	}
	ca, err := selfSignedCA()
	if err != nil {
		return d, err
	}
	files[d.caFile] = ca
	for _, sub := range []string{d.configmaps, d.secrets, d.configDir, d.scripts, d.logs} {
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return d, err
		}
	}
	for p, body := range files {
		mode := os.FileMode(0o644)
		if path.Base(p) == "step_script" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			return d, err
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			return d, err
		}
	}
	root, _ := sandbox.HostID(0)
	group, ok := sandbox.HostID(65533)
	if !ok {
		return d, errors.New("cannot map group 65533 into the sandbox")
	}
	for _, sub := range []string{d.configDir, d.logs} {
		if err := os.Chown(sub, root, group); err != nil {
			return d, err
		}
		if err := os.Chmod(sub, 0o775|os.ModeSetgid); err != nil {
			return d, err
		}
	}
	return d, nil
}
