package verify

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/gitlabbase"
	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// runArchs are the platforms the --run tables run on: amd64 natively (on
// an amd64 host), arm64 under qemu-user.
var runArchs = []struct {
	p        v1.Platform
	goarch   string
	how, deb string
}{{amd64, "amd64", "natively", "amd64"}, {arm64, "arm64", "under qemu-aarch64-static", "arm64"}}

// goTools is an own layer of Go programs without a --version (issue 37: a
// Go-written pgrep takes it for a pattern and exits 1, kubectl has a version
// subcommand only, a flag-package tool exits 2, another prints its usage to
// stderr and exits 1) and a real busybox, whose --version is an applet
// name, with /bin/sh linked to it.
func goTools(t *testing.T, goarch, deb string) lay {
	nov := bins["noversion-"+goarch]
	return own(
		tartest.File("bin/busybox", 0o755, gitlabBaseDebs(t, deb).Busybox),
		tartest.Symlink("bin/sh", "busybox"),
		tartest.File("usr/bin/pgrep", 0o755, nov),
		tartest.File("usr/local/bin/kubectl", 0o755, nov),
		tartest.File("usr/local/bin/flagtool", 0o755, nov),
		tartest.File("usr/local/bin/stderr-tool", 0o755, nov))
}

// Seeded: --run asks --version only of GitLab Runner's binaries and the
// ones the caller built; the image's other Go programs are listed, not run,
// so none of them fails a good image. A contract-named or built binary
// without --version still fails it.
func TestRunVersionOnlyOfNamedBinaries(t *testing.T) {
	testkit.Tool(t, "qemu-aarch64-static")
	const notRun = "; not run (only GitLab Runner's binaries and the release's are asked --version): " +
		"/usr/bin/pgrep, /usr/local/bin/kubectl, /usr/local/bin/flagtool, /usr/local/bin/stderr-tool"
	for _, a := range runArchs {
		t.Run(a.goarch, func(t *testing.T) {
			if a.goarch == "amd64" && runtime.GOARCH != "amd64" {
				t.Skip("native runs are for amd64 hosts")
			}
			helper := own(tartest.File("usr/bin/gitlab-runner-helper", 0o755, bins[a.goarch]))
			brokenRunner := own(tartest.File("usr/bin/gitlab-runner", 0o755, bins["noversion-"+a.goarch]))
			tests := []struct {
				name     string
				layers   []lay
				versions []string
				want     string
			}{
				{name: "Go programs without --version beside the helper", layers: []lay{goTools(t, a.goarch, a.deb), helper},
					want: a.p.OS + "/" + a.p.Architecture + ": ran " + a.how + " in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/" + a.goarch + "); /bin/sh -c true" + notRun},
				{name: "Go programs without --version alone", layers: []lay{goTools(t, a.goarch, a.deb)},
					want: "linux/" + a.goarch + ": ran " + a.how + " in a sandbox: /bin/sh -c true" + notRun},
				{name: "contract-named binary without --version", layers: []lay{goTools(t, a.goarch, a.deb), brokenRunner},
					want: "FAIL linux/" + a.goarch + ": /usr/bin/gitlab-runner --version exited with status 1: usage: gitlab-runner FILE"},
				{name: "built binary without --version", layers: []lay{goTools(t, a.goarch, a.deb), helper}, versions: []string{"/usr/local/bin/flagtool"},
					want: "FAIL linux/" + a.goarch + ": /usr/local/bin/flagtool --version exited with status 2: flag provided but not defined: -version"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					idx := testIndex(t, listed{a.p, testImage(t, a.p, v1.Config{}, tt.layers...)})
					r, err := Index(context.Background(), idx, Options{Run: true, TempDir: t.TempDir(), Versions: tt.versions})
					require.NoError(t, err)
					assert.Equal(t, []string{tt.want}, runChecks(r))
				})
			}
		})
	}
}

// Images that start as GitLab starts them pass --run with a contract, on
// amd64 and arm64, whatever Go programs without --version they carry in
// their own layers (the chart's Go-written pgrep among them).
func TestRunPassesImagesThatStart(t *testing.T) {
	if !sandbox.CanRunAs() || runtime.GOARCH != "amd64" {
		t.Skip("the start-up runs need root on an amd64 host")
	}
	testkit.Tool(t, "qemu-aarch64-static")
	for _, a := range runArchs {
		t.Run(a.goarch, func(t *testing.T) {
			debs := gitlabBaseDebs(t, a.deb)
			pgrep, err := gitlabbase.BuildPgrep(context.Background(), t.TempDir(), a.goarch, "", os.Environ())
			require.NoError(t, err)
			nov := bins["noversion-"+a.goarch]
			tools := own(tartest.File("usr/bin/pgrep", 0o755, pgrep), tartest.File("usr/local/bin/kubectl", 0o755, nov),
				tartest.File("usr/local/bin/stderr-tool", 0o755, nov))
			for _, c := range []struct {
				contract string
				kind     gitlabbase.Kind
				cfg      v1.Config
				binary   string
			}{
				{ContractRunner, gitlabbase.Runner, v1.Config{Env: []string{imagePath}}, "usr/bin/gitlab-runner"},
				{ContractHelper, gitlabbase.Helper, v1.Config{Env: []string{imagePath}, Entrypoint: []string{"/usr/bin/dumb-init", "/entrypoint"}, Cmd: []string{"sh"}},
					"usr/bin/gitlab-runner-helper"},
			} {
				t.Run(c.contract, func(t *testing.T) {
					layer, err := debs.Layer(c.kind, gitlabbase.Options{Pgrep: pgrep, CA: []byte("ca\n"), Epoch: time.Unix(0, 0)})
					require.NoError(t, err)
					img := testImage(t, a.p, c.cfg, lay{raw: layer}, tools, own(tartest.File(c.binary, 0o755, bins[a.goarch])))
					r, err := Index(context.Background(), testIndex(t, listed{a.p, img}), Options{Run: true, Contract: c.contract,
						TempDir: t.TempDir(), RunTimeout: 20 * time.Second})
					require.NoError(t, err)
					assert.Equal(t, []string{"ok"}, startFailures(r))
					assert.Contains(t, runChecks(r)[0], "/"+c.binary+" --version (OS/Arch: linux/"+a.goarch+")")
					assert.Contains(t, runChecks(r)[0], "not run (only GitLab Runner's binaries and the release's are asked --version): /usr/bin/pgrep, /usr/local/bin/kubectl, /usr/local/bin/stderr-tool")
				})
			}
		})
	}
}

// A passing table says what the run and start-up checks ran, per
// platform, under the grid; a failed run is a finding, not a ran line.
func TestTableSaysWhatRan(t *testing.T) {
	d := "sha256:" + strings.Repeat("a", 64)
	r := &Report{Digest: d, Platforms: []PlatformReport{
		{Platform: "linux/amd64", Digest: d, Checks: []Check{{Name: CheckRun, OK: true, Reason: "ran natively in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/amd64); /bin/sh -c true; not run (only GitLab Runner's binaries and the release's are asked --version): /usr/bin/kubectl"},
			{Name: CheckStart, OK: true, Reason: "started natively in a sandbox: helper start-up (Kubernetes executor); helper start-up (Docker executor)"}}},
		{Platform: "linux/arm64", Digest: d, Checks: []Check{{Name: CheckRun, Reason: "/usr/bin/gitlab-runner-helper --version exited with status 1: usage"},
			{Name: CheckStart, OK: true, Reason: "started under qemu-aarch64-static in a sandbox: helper start-up (Kubernetes executor)"}}},
	}}
	var b strings.Builder
	require.NoError(t, WriteTable(&b, "img", r))
	assert.Contains(t, b.String(), "\n\n"+
		"linux/amd64 run: ran natively in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/amd64); /bin/sh -c true; not run (only GitLab Runner's binaries and the release's are asked --version): /usr/bin/kubectl\n"+
		"linux/amd64 start: started natively in a sandbox: helper start-up (Kubernetes executor); helper start-up (Docker executor)\n"+
		"linux/arm64 start: started under qemu-aarch64-static in a sandbox: helper start-up (Kubernetes executor)\n"+
		"\nlinux/arm64 run: FAIL: /usr/bin/gitlab-runner-helper --version exited with status 1: usage\n")
	assert.Equal(t, 1, strings.Count(b.String(), "linux/arm64 run:"), "a failed run is told once, as a failure")
}
