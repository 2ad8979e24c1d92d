package verify

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/gitlabbase"
	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// gitlabBaseDebs is where scripts/install-test-deps.sh caches the .debs of
// the GitLab-like bases; the test is skipped without them.
func gitlabBaseDebs(t testing.TB, arch string) *gitlabbase.Debs {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	d, err := gitlabbase.Read(context.Background(), filepath.Join(cache, "helperbuild-e2e", "gitlab-base"), arch)
	if err != nil {
		t.Skipf("no GitLab-like base for %s: %v", arch, err)
	}
	return d
}

// startFailures are the report's failures, "check: reason", or "ok" when there
// are none and a start-up run passed.
func startFailures(r *Report) []string {
	var out []string
	started := false
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			started = started || (c.Name == CheckStart && c.OK)
			if !c.OK {
				out = append(out, c.Name+": "+c.Reason)
			}
		}
	}
	if len(out) == 0 && started {
		return []string{"ok"}
	}
	return out
}

// Each seeded defect of a GitLab-like runner base fails the chart's start-up
// at its step and nowhere else; the complete base and the defects the chart
// does not trip over pass.
func TestRunnerStartUp(t *testing.T) {
	if !sandbox.CanRunAs() || runtime.GOARCH != "amd64" {
		t.Skip("the start-up runs need root on an amd64 host")
	}
	type tc struct {
		defect gitlabbase.Defect
		want   string // "" passes; else a regexp of the one start finding
	}
	cases := []tc{
		{"", ""},
		{gitlabbase.NoSeqBusyboxSh, ""},
		{gitlabbase.HomeNotWritable, ""},
		{gitlabbase.HomeElsewhere, ""},
		{gitlabbase.ConfigDirUncovered, `^start: runner start-up: /configmaps/register-the-runner: register-the-runner: gitlab-runner's config directory /var/lib/gitlab-runner/.gitlab-runner \(HOME=/var/lib/gitlab-runner\) is not writable: no emptyDir of the chart covers it \(only /home/gitlab-runner/.gitlab-runner\) \(uid 100, exited with status 1\)$`},
		{gitlabbase.BashNotBash, `^start: runner start-up: /usr/bin/dumb-init -- /bin/bash /configmaps/entrypoint: exited with status 0 before its step exec /entrypoint run \(uid 100\)$`},
		{gitlabbase.CRLFEntrypoint, `^start: runner start-up: /configmaps/register-the-runner: register-the-runner: /entrypoint --version failed 3 times: .*/entrypoint: not found \(uid 100, exited with status 1\)$`},
		{gitlabbase.EntrypointNotExec, `^start: runner start-up: /configmaps/register-the-runner: .*/entrypoint.*Permission denied.*\(uid 100, exited with status 1\)$`},
		{gitlabbase.EntrypointDropsArgs, `^start: runner start-up: /configmaps/register-the-runner: .*printed no Version: line.*\(uid 100, exited with status 1\)$`},
		{gitlabbase.NoSeqBashSh, `^start: runner start-up: /configmaps/register-the-runner: .*seq.*\(uid 100, exited with status 1\)$`},
		{gitlabbase.NoPgrep, `^start: runner start-up: /configmaps/check-live: /usr/bin/pgrep .*No such file or directory \(uid 100, exited with status 1\)$`},
		{gitlabbase.PgrepBusybox, `^start: runner start-up: /configmaps/check-live: .*pgrep: applet not found \(uid 100, exited with status 1\)$`},
		// The kernel says it natively, qemu-user under emulation.
		{gitlabbase.DumbInitNoLoader, `^start: runner start-up: /usr/bin/dumb-init -- /bin/bash /configmaps/entrypoint: (exec /usr/bin/dumb-init: no such file or directory \(the file or its ELF interpreter is missing\) \(uid 100\)|qemu-aarch64-static: Could not open '/lib/ld-linux-aarch64.so.1': No such file or directory \(uid 100, exited with status 255\))$`},
		// An arm64 node cannot run an amd64 bash (dumb-init's execvp then
		// hands it to /bin/sh, which finds no script in it); the host could.
		{gitlabbase.ForeignBash, `^start: runner start-up: /usr/bin/dumb-init -- /bin/bash /configmaps/entrypoint: .*\(uid 100, exited with status 2\)$`},
	}
	archs := []struct {
		p      v1.Platform
		deb    string
		goarch string
	}{{amd64, "amd64", "amd64"}, {arm64, "arm64", "arm64"}}
	for _, a := range archs {
		t.Run(a.deb, func(t *testing.T) {
			debs := gitlabBaseDebs(t, a.deb)
			pgrep, err := gitlabbase.BuildPgrep(context.Background(), t.TempDir(), a.goarch, "", os.Environ())
			require.NoError(t, err)
			for _, c := range cases {
				if (c.defect == gitlabbase.ForeignBash && a.goarch == "amd64") || (a.goarch != "amd64" && !underQemu[c.defect]) {
					continue // the whole table natively; under qemu what emulation changes (test/e2e runs every platform)
				}
				name := string(c.defect)
				if name == "" {
					name = "complete"
				}
				t.Run(name, func(t *testing.T) {
					layer, err := debs.Layer(gitlabbase.Runner, gitlabbase.Options{Pgrep: pgrep, CA: []byte("ca\n"), Epoch: time.Unix(0, 0), Defect: c.defect,
						NotBash: bins[a.goarch], ForeignBash: gitlabBaseDebs(t, "amd64").Bash})
					require.NoError(t, err)
					img := testImage(t, a.p, v1.Config{Env: []string{imagePath}},
						lay{raw: layer}, own(tartest.File("usr/bin/gitlab-runner", 0o755, bins[a.goarch])))
					r, err := Index(context.Background(), testIndex(t, listed{a.p, img}), Options{Run: true, Contract: ContractRunner,
						TempDir: t.TempDir(), RunTimeout: 20 * time.Second})
					require.NoError(t, err)
					got := startFailures(r)
					t.Logf("%q", got)
					require.Len(t, got, 1, strings.Join(got, "\n"))
					if c.want == "" {
						assert.Equal(t, "ok", got[0])
					} else {
						assert.Regexp(t, c.want, got[0])
					}
				})
			}
		})
	}
}

const imagePath = "PATH=" + defaultPath

// underQemu are the seeded defects also started under qemu here: those
// whose outcome emulation could change (exec of foreign and dynamically
// linked programs, busybox's applets run by name through binfmt_misc).
var underQemu = map[gitlabbase.Defect]bool{"": true, gitlabbase.NoSeqBusyboxSh: true, gitlabbase.NoSeqBashSh: true,
	gitlabbase.DumbInitNoLoader: true, gitlabbase.ForeignBash: true, gitlabbase.BashNotBash: true, gitlabbase.BuildWithoutUmask: true}

// The helper starts as the Kubernetes executor (shell detection, a stage
// through gitlab-runner-build) and the Docker executor (its ENTRYPOINT with
// gitlab-runner-build and a custom CA) start it, as root.
func TestHelperStartUp(t *testing.T) {
	if !sandbox.CanRunAs() || runtime.GOARCH != "amd64" {
		t.Skip("the start-up runs need root on an amd64 host")
	}
	cases := []struct {
		defect gitlabbase.Defect
		want   []string // regexps of the failures, in order; nil passes
	}{
		{"", nil},
		{gitlabbase.NoPgrep, nil}, // the helper never runs pgrep
		{gitlabbase.BuildWithoutUmask, []string{
			`^start: helper start-up \(Kubernetes executor\): umask 0000: umask is 0022 in the stage, want 0000: .* \(root, exited with status 1\)$`,
			`^start: helper start-up \(Docker executor\): umask 0000: umask is 0022 in the stage, want 0000: .* \(root, exited with status 1\)$`}},
		{gitlabbase.EntrypointDropsArgs, []string{
			`^start: helper start-up \(Docker executor\): /usr/bin/dumb-init /entrypoint gitlab-runner-build: exited with status 0 before its step build directory \(root\)$`}},
	}
	archs := []struct {
		p      v1.Platform
		deb    string
		goarch string
	}{{amd64, "amd64", "amd64"}, {arm64, "arm64", "arm64"}}
	for _, a := range archs {
		t.Run(a.deb, func(t *testing.T) {
			debs := gitlabBaseDebs(t, a.deb)
			for _, c := range cases {
				name := string(c.defect)
				if name == "" {
					name = "complete"
				}
				if a.goarch != "amd64" && !underQemu[c.defect] {
					continue
				}
				t.Run(name, func(t *testing.T) {
					layer, err := debs.Layer(gitlabbase.Helper, gitlabbase.Options{Pgrep: bins[a.goarch], CA: []byte("ca\n"), Epoch: time.Unix(0, 0), Defect: c.defect})
					require.NoError(t, err)
					cfg := v1.Config{Env: []string{imagePath}, Entrypoint: []string{"/usr/bin/dumb-init", "/entrypoint"}, Cmd: []string{"sh"}}
					img := testImage(t, a.p, cfg, lay{raw: layer}, own(tartest.File("usr/bin/gitlab-runner-helper", 0o755, bins[a.goarch])))
					r, err := Index(context.Background(), testIndex(t, listed{a.p, img}), Options{Run: true, Contract: ContractHelper,
						TempDir: t.TempDir(), RunTimeout: 20 * time.Second})
					require.NoError(t, err)
					got := startFailures(r)
					t.Logf("%q", got)
					if c.want == nil {
						assert.Equal(t, []string{"ok"}, got)
						return
					}
					require.Len(t, got, len(c.want))
					for i, w := range c.want {
						assert.Regexp(t, w, got[i])
					}
				})
			}
		})
	}
}

// A failed start-up step shows in the table's START column and carries its
// step, user, status and output tail into the JSON findings.
func TestStartFindingOutput(t *testing.T) {
	r := &Report{Digest: "sha256:" + strings.Repeat("a", 64), Platforms: []PlatformReport{{Platform: "linux/arm64", Digest: "sha256:" + strings.Repeat("b", 64),
		Checks: []Check{{Name: CheckContract, OK: true, Reason: "ok"}, {Name: CheckRun, OK: true, Reason: "ran"},
			{Name: CheckStart, Reason: "runner start-up: /configmaps/check-live: pgrep: applet not found (uid 100, exited with status 1)",
				StepResult: StepResult{Step: "/configmaps/check-live", User: "uid 100", Status: 1, Output: "pgrep: applet not found"}}}}}}
	var table strings.Builder
	require.NoError(t, WriteTable(&table, "img", r))
	assert.Contains(t, table.String(), "PLATFORM     DIGEST        CONTRACT  RUN  START\nlinux/arm64  bbbbbbbbbbbb  ok        ok   FAIL\n")
	var js strings.Builder
	require.NoError(t, WriteReportJSON(&js, "img", r))
	assert.Contains(t, js.String(), `"check": "start",
          "path": "",
          "reason": "runner start-up: /configmaps/check-live: pgrep: applet not found (uid 100, exited with status 1)",
          "severity": "fail",
          "step": "/configmaps/check-live",
          "user": "uid 100",
          "status": 1,
          "output": "pgrep: applet not found"`)
}

// A step that does not end fails when its time limit passes, and nothing it
// started outlives the run.
func TestStartUpStepTimeLimit(t *testing.T) {
	if !sandbox.CanRunAs() || runtime.GOARCH != "amd64" {
		t.Skip("the start-up runs need root on an amd64 host")
	}
	debs := gitlabBaseDebs(t, "amd64")
	pgrep, err := gitlabbase.BuildPgrep(context.Background(), t.TempDir(), "amd64", "", os.Environ())
	require.NoError(t, err)
	layer, err := debs.Layer(gitlabbase.Runner, gitlabbase.Options{Pgrep: pgrep, CA: []byte("ca\n"), Defect: gitlabbase.EntrypointHangs})
	require.NoError(t, err)
	img := testImage(t, amd64, v1.Config{Env: []string{imagePath}}, lay{raw: layer}, own(tartest.File("usr/bin/gitlab-runner", 0o755, bins["amd64"])))
	var pids []int
	r, err := Index(context.Background(), testIndex(t, listed{amd64, img}), Options{Run: true, Contract: ContractRunner,
		TempDir: t.TempDir(), RunTimeout: 3 * time.Second, Sandbox: &sandbox.Runner{Started: func(pid int) { pids = append(pids, pid) }}})
	require.NoError(t, err)
	assert.Equal(t, []string{"start: runner start-up: /configmaps/register-the-runner: did not finish within 3s (uid 100)"}, startFailures(r))
	require.NotEmpty(t, pids)
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "sandbox %d ended", pid)
	}
}
