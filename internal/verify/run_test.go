package verify

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// runChecks returns the run checks of every platform: "platform: reason"
// with "FAIL " or "warning " in front of failures and warnings.
func runChecks(r *Report) []string {
	var out []string
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			if c.Name != CheckRun {
				continue
			}
			prefix := ""
			switch {
			case !c.OK:
				prefix = "FAIL "
			case c.Warning:
				prefix = "warning "
			}
			out = append(out, prefix+p.Platform+": "+c.Reason)
		}
	}
	return out
}

func TestRunQemu(t *testing.T) {
	testkit.Tool(t, "qemu-aarch64-static")
	helperOnly := func(bin []byte) lay { return own(tartest.File("usr/bin/gitlab-runner-helper", 0o755, bin)) }
	tests := []struct {
		name   string
		layers []lay
		want   []string
	}{
		{
			name:   "arm64 Go binary without busybox",
			layers: []lay{helperOnly(bins["arm64"])},
			want:   []string{"linux/arm64: ran under qemu-aarch64-static in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/arm64); no /bin/sh"},
		},
		{
			name:   "sh through a busybox symlink",
			layers: []lay{busyboxBase(bins["arm64"]), helperOnly(bins["arm64"])},
			want:   []string{"linux/arm64: ran under qemu-aarch64-static in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/arm64); /bin/sh -c true"},
		},
		{
			name:   "binary that claims another OS/Arch",
			layers: []lay{helperOnly(bins["arm64-liar"])},
			want:   []string{"FAIL linux/arm64: /usr/bin/gitlab-runner-helper --version says OS/Arch linux/amd64, want linux/arm64"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := testIndex(t, listed{arm64, testImage(t, arm64, v1.Config{}, tt.layers...)})
			dir := t.TempDir()
			r, err := Index(context.Background(), idx, Options{Run: true, TempDir: dir})
			require.NoError(t, err)
			assert.Equal(t, tt.want, runChecks(r))
			assert.NoDirExists(t, filepath.Join(dir, "0"), "the unpacked tree is thrown away")
		})
	}
}

func TestRunQemuWrongBinary(t *testing.T) {
	testkit.Tool(t, "qemu-aarch64-static")
	idx := testIndex(t, listed{arm64, testImage(t, arm64, v1.Config{}, own(tartest.File("usr/bin/gitlab-runner-helper", 0o755, bins["amd64"])))})
	r, err := Index(context.Background(), idx, Options{Run: true, TempDir: t.TempDir()})
	require.NoError(t, err)
	got := runChecks(r)
	require.Len(t, got, 1)
	assert.Regexp(t, `^FAIL linux/arm64: /usr/bin/gitlab-runner-helper --version exited with status \d+: qemu-aarch64-static: /usr/bin/gitlab-runner-helper: Invalid ELF image for this architecture$`, got[0])
}

func TestRunQemuMissing(t *testing.T) {
	idx := testIndex(t, listed{arm64, testImage(t, arm64, v1.Config{}, own(tartest.File("usr/bin/x", 0o755, bins["arm64"])))})
	var asked []string
	r, err := Index(context.Background(), idx, Options{Run: true, TempDir: t.TempDir(), Qemu: func(arch string) (string, error) {
		asked = append(asked, arch)
		return "", errors.New("not found")
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{"aarch64"}, asked)
	assert.Equal(t, []string{"FAIL linux/arm64: qemu-aarch64-static not found: apt-get install qemu-user-static"}, runChecks(r))
}

func TestRunNative(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("native runs are for amd64 hosts")
	}
	layers := []lay{busyboxBase(bins["amd64"]), own(tartest.File("usr/bin/gitlab-runner-helper", 0o755, bins["amd64"]))}
	idx := testIndex(t, listed{amd64, testImage(t, amd64, v1.Config{}, layers...)})
	r, err := Index(context.Background(), idx, Options{Run: true, TempDir: t.TempDir(), HostArch: "amd64",
		Qemu: func(string) (string, error) { return "", errors.New("amd64 must not need qemu") }})
	require.NoError(t, err)
	assert.Equal(t, []string{"linux/amd64: ran natively in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/amd64); /bin/sh -c true"}, runChecks(r))
}

// A dynamically linked program runs against the image's own loader and
// libraries, never the host's: without them in the image, it fails.
func TestRunNativeDynamicUsesTheImagesLoader(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the cgo test binary is built for amd64 hosts")
	}
	idx := testIndex(t, listed{amd64, testImage(t, amd64, v1.Config{}, own(tartest.File("usr/bin/gitlab-runner-helper", 0o755, bins["cgo"])))})
	r, err := Index(context.Background(), idx, Options{Run: true, TempDir: t.TempDir()})
	require.NoError(t, err)
	assert.Equal(t, []string{"FAIL linux/amd64: /usr/bin/gitlab-runner-helper --version: exec /usr/bin/gitlab-runner-helper: no such file or directory (the file or its ELF interpreter is missing)"}, runChecks(r))
}

func TestRunNeedsTempDir(t *testing.T) {
	idx := testIndex(t, listed{amd64, testImage(t, amd64, v1.Config{})})
	_, err := Index(context.Background(), idx, Options{Run: true})
	assert.ErrorContains(t, err, "run needs a temporary directory")
}

func TestUnpackStaysInside(t *testing.T) {
	outside := t.TempDir()
	layers := []lay{
		base(
			tartest.Symlink("evil", outside),
			tartest.Symlink("rel", "../../../../../.."+outside),
			tartest.File("bin/busybox", 0o755, []byte("bb")),
			tartest.Hardlink("bin/git", "bin/busybox"),
			tartest.Dir("ro/", 0o555),
			tartest.File("ro/f", 0o400, []byte("r")),
		),
		base(tartest.File("evil/x", 0o644, []byte("x"))), // evil becomes a directory (overlayfs)
	}
	img := testImage(t, amd64, v1.Config{}, layers...)
	ls, err := img.Layers()
	require.NoError(t, err)
	tr := rootfs.New()
	require.NoError(t, scan(context.Background(), ls, nil, tr, make([]bool, len(ls)), "", nil))
	dir := filepath.Join(t.TempDir(), "rootfs")
	require.NoError(t, unpack(context.Background(), ls, tr, dir, unpackLimits{maxBytes: 1 << 20, maxFiles: 100, uid: os.Getuid(), gid: os.Getgid()}))

	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing may be written outside the rootfs")
	b, err := os.ReadFile(filepath.Join(dir, "evil", "x"))
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
	target, err := os.Readlink(filepath.Join(dir, "rel"))
	require.NoError(t, err)
	assert.Equal(t, "../../../../../.."+outside, target, "symlinks are written as they are")
	b, err = os.ReadFile(filepath.Join(dir, "bin", "git"))
	require.NoError(t, err)
	assert.Equal(t, "bb", string(b))
	fi, err := os.Stat(filepath.Join(dir, "ro", "f"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "owner read/write added so the caller can clean up")
}

// os/exec copies a program's output with io.Copy, which would prefer a
// ReadFrom method over the bounded Write.
func TestLimitedBufferBoundsIOCopy(t *testing.T) {
	b := &limitedBuffer{max: 10}
	n, err := io.Copy(b, bytes.NewReader(make([]byte, 1000)))
	require.NoError(t, err)
	assert.Equal(t, int64(1000), n)
	assert.Len(t, b.Bytes(), 10)
}

// Without a contract, only Go programs (build info naming a main package)
// are asked --version: a C program such as busybox or coreutils' true takes
// it for an applet name or ignores it, and a base's tools are not the
// image's to prove. Whether or not the history says which layers are own.
func TestRunAsksOnlyGoProgramsForVersion(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("native runs are for amd64 hosts")
	}
	cTool, err := os.ReadFile("/bin/true") // a dynamically linked C program: run, it fails without its loader
	if err != nil {
		t.Skip("no /bin/true on this host")
	}
	helper := tartest.File("usr/bin/gitlab-runner-helper", 0o755, bins["amd64"])
	want := []string{"linux/amd64: ran natively in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/amd64); no /bin/sh"}
	for name, layers := range map[string][]lay{
		"own layers":        {own(tartest.File("bin/busybox", 0o755, cTool)), own(helper)},
		"history says none": {base(tartest.File("bin/busybox", 0o755, cTool)), base(helper)},
	} {
		t.Run(name, func(t *testing.T) {
			idx := testIndex(t, listed{amd64, testImage(t, amd64, v1.Config{}, layers...)})
			r, err := Index(context.Background(), idx, Options{Run: true, TempDir: t.TempDir(), HostArch: "amd64"})
			require.NoError(t, err)
			assert.Equal(t, want, runChecks(r))
		})
	}
}
