package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

func needQemu(t *testing.T) {
	testkit.Tool(t, "qemu-aarch64-static")
}

// adversaryIndex lists an amd64 (native) and an arm64 (qemu) image of the
// adversary under names, aimed at h.
func adversaryIndex(t *testing.T, h *sandboxtest.Host, names ...string) v1.ImageIndex {
	return roundTrip(t, sandboxtest.Index(t,
		sandboxtest.AttackImage(t, amd64, adversaries["amd64"], h.Env(), names...),
		sandboxtest.AttackImage(t, arm64, adversaries["arm64"], h.Env(), names...)))
}

// attackPaths are the image paths AttackImage gives the adversary under
// names: the programs Run is told to ask --version, as a release's own.
func attackPaths(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "/usr/bin/" + n
	}
	return out
}

// The attacks that end by themselves (or by their output) each fail the
// run check with what the program saw, and none reaches the host.
func TestRunAdversaries(t *testing.T) {
	needQemu(t)
	h := sandboxtest.NewHost(t)
	names := []string{"write-host-file", "read-canary", "dial-host", "print-forever"}
	idx := adversaryIndex(t, h, names...)
	tr := &sandboxtest.Tracker{}
	dir := t.TempDir()
	r, err := Index(context.Background(), idx, Options{Run: true, Versions: attackPaths(names...), TempDir: dir, Jobs: 2, Sandbox: &sandbox.Runner{Started: tr.Started}})
	require.NoError(t, err)
	var want []string
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		want = append(want, // in the layer's order, by name
			"FAIL "+p+": /usr/bin/dial-host --version exited with status 1: dial-host: dial "+h.Listener.Addr().String()+": dial tcp "+h.Listener.Addr().String()+": connect: connection refused",
			"FAIL "+p+": /usr/bin/print-forever --version printed more than 1.0 MiB and was stopped",
			"FAIL "+p+": /usr/bin/read-canary --version exited with status 1: read-canary: read canary: open "+h.Canary+": no such file or directory",
			// It may write that path: in its own overlay, thrown away.
			"FAIL "+p+": /usr/bin/write-host-file --version exited with status 1: write-host-file: write "+h.File+": done",
		)
	}
	got := runChecks(r)
	assert.Equal(t, want, got)
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			if c.Name == CheckRun {
				assert.True(t, strings.HasPrefix(c.Reason, c.Path+" --version "), "the finding names its program: %+v", c)
			}
		}
	}
	h.Untouched(t, strings.Join(got, "\n"))
	assert.Equal(t, 8, tr.Count(), "one sandbox per program")
	assert.Empty(t, tr.Leftovers())
	assert.False(t, r.OK())
	assert.NoDirExists(t, filepath.Join(dir, "0"))
	assert.NoDirExists(t, filepath.Join(dir, "1"))
}

// Programs that never end are stopped at the timeout with everything they
// started; a fork bomb meets the process limit first.
func TestRunNeverEnding(t *testing.T) {
	needQemu(t)
	h := sandboxtest.NewHost(t)
	idx := adversaryIndex(t, h, "fork-bomb", "sleep-forever")
	tr := &sandboxtest.Tracker{}
	// The programs never end, so the outcome does not depend on how long
	// the timeout is.
	r, err := Index(context.Background(), idx, Options{Run: true, Versions: attackPaths("fork-bomb", "sleep-forever"), TempDir: t.TempDir(), Jobs: 2, RunTimeout: 2 * time.Second,
		RunLimits: sandbox.Limits{Processes: 32}, Sandbox: &sandbox.Runner{Started: tr.Started}})
	require.NoError(t, err)
	var want []string
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		want = append(want,
			"FAIL "+p+": /usr/bin/fork-bomb --version timed out after 2s",
			"FAIL "+p+": /usr/bin/sleep-forever --version timed out after 2s")
	}
	assert.Equal(t, want, runChecks(r))
	assert.Equal(t, 4, tr.Count())
	assert.Empty(t, tr.Leftovers(), "the fork bomb's processes end with the run")
}

// An image that unpacks to more than the limits is a failed run check, with
// nothing written or run.
func TestRunUnpackLimits(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		files int
		size  int64
		want  string
	}{
		{"bytes", Options{UnpackMaxBytes: 2 << 20}, 3, 1 << 20, "the image unpacks to 3.0 MiB, more than the 2.0 MiB allowed (--run-max-size): nothing was run"},
		{"files", Options{UnpackMaxFiles: 10}, 20, 1, "the image unpacks to 21 files, directories and links, more than the 10 allowed: nothing was run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &sandboxtest.Tracker{}
			idx := roundTrip(t, sandboxtest.Index(t, sandboxtest.BigImage(t, amd64, tt.files, tt.size), sandboxtest.BigImage(t, arm64, tt.files, tt.size)))
			opts := tt.opts
			opts.Run, opts.TempDir, opts.Sandbox = true, t.TempDir(), &sandbox.Runner{Started: tr.Started}
			opts.Qemu = func(string) (string, error) { return "/nonexistent/qemu", nil }
			r, err := Index(context.Background(), idx, opts)
			require.NoError(t, err)
			assert.Equal(t, []string{"FAIL linux/amd64: " + tt.want, "FAIL linux/arm64: " + tt.want}, runChecks(r))
			assert.Zero(t, tr.Count(), "nothing ran")
			assert.NoDirExists(t, filepath.Join(opts.TempDir, "0"))
		})
	}
}

// Programs get the image config's environment and nothing of the caller's.
func TestRunImageEnvironment(t *testing.T) {
	t.Setenv("HELPERBUILD_TEST_SECRET", "from-the-caller")
	cfg := v1.Config{Env: []string{"PATH=/usr/bin", "FROM_IMAGE=yes"}}
	noPath := v1.Config{Env: []string{"FROM_IMAGE=yes"}}
	for _, tt := range []struct {
		cfg  v1.Config
		want string
	}{
		{cfg, "PATH=/usr/bin FROM_IMAGE=yes"},
		{noPath, "FROM_IMAGE=yes PATH=" + defaultPath},
	} {
		img := sandboxtest.AttackImage(t, amd64, adversaries["amd64"], tt.cfg.Env, "print-env")
		r, err := Index(context.Background(), roundTrip(t, sandboxtest.Index(t, img)), Options{Run: true, Versions: attackPaths("print-env"), TempDir: t.TempDir()})
		require.NoError(t, err)
		assert.Equal(t, []string{"linux/amd64: ran natively in a sandbox: /usr/bin/print-env --version (" + tt.want + "); no /bin/sh"}, runChecks(r))
	}
}

// Where the kernel refuses user namespaces, Run stops verification with the
// reason and runs nothing.
func TestRunRefusedWithoutUserNamespaces(t *testing.T) {
	if !sandboxtest.Denied(os.Environ()) {
		sandboxtest.RunWithoutUserNamespaces(t, os.Environ())
		return
	}
	h := sandboxtest.NewHost(t)
	img := sandboxtest.AttackImage(t, amd64, adversaries["amd64"], h.Env(), "write-host-file", "dial-host")
	_, err := Index(context.Background(), roundTrip(t, sandboxtest.Index(t, img)), Options{Run: true, Versions: attackPaths("write-host-file", "dial-host"), TempDir: t.TempDir()})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), "no sandbox for the image's programs (create namespaces: ")
	h.Untouched(t, err.Error())
}
