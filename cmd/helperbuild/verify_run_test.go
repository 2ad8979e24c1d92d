package main

import (
	"os"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

var (
	linuxAmd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	linuxArm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

// attackLayout writes an OCI layout of an index of the adversary, amd64 and
// arm64, under names, aimed at h.
func attackLayout(t *testing.T, h *sandboxtest.Host, names ...string) string {
	t.Helper()
	testkit.Tool(t, "qemu-aarch64-static")
	bins := t.TempDir()
	amd, err := sandboxtest.BuildAdversary(bins, "amd64", os.Environ())
	require.NoError(t, err)
	arm, err := sandboxtest.BuildAdversary(bins, "arm64", os.Environ())
	require.NoError(t, err)
	return writeLayout(t, sandboxtest.Index(t,
		sandboxtest.AttackImage(t, linuxAmd64, amd, h.Env(), names...),
		sandboxtest.AttackImage(t, linuxArm64, arm, h.Env(), names...)))
}

func writeLayout(t *testing.T, idx v1.ImageIndex) string {
	t.Helper()
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendIndex(idx))
	return dir
}

// verifyRun runs verify --run on the layout for amd64 and arm64 and checks
// that it failed with every reason and left no process behind.
func verifyRun(t *testing.T, dir string, extra []string, reasons ...string) string {
	t.Helper()
	args := append([]string{"verify", "--run", "--platforms", "linux/amd64,linux/arm64"}, extra...)
	for _, r := range reasons {
		if prog, _, ok := strings.Cut(r, " --version"); ok {
			args = append(args, "--run-version", prog)
		}
	}
	code, stdout, stderr := run(t, baseEnv(), append(args, "oci:"+dir)...)
	assert.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, r := range reasons {
		assert.Contains(t, stdout, "linux/amd64,linux/arm64 run: FAIL: "+r)
	}
	assert.Contains(t, stderr, "failed verification")
	assert.Empty(t, sandboxtest.Descendants(os.Getpid()), "nothing verify started is still running")
	return stdout + stderr
}

func TestVerifyRunAdversaries(t *testing.T) {
	h := sandboxtest.NewHost(t)
	dir := attackLayout(t, h, "write-host-file", "read-canary", "dial-host", "print-forever")
	addr := h.Listener.Addr().String()
	out := verifyRun(t, dir, nil,
		"/usr/bin/write-host-file --version exited with status 1: write-host-file: write "+h.File+": done",
		"/usr/bin/read-canary --version exited with status 1: read-canary: read canary: open "+h.Canary+": no such file or directory",
		"/usr/bin/dial-host --version exited with status 1: dial-host: dial "+addr+": dial tcp "+addr+": connect: connection refused",
		"/usr/bin/print-forever --version printed more than 1.0 MiB and was stopped")
	h.Untouched(t, out)
}

func TestVerifyRunNeverEnding(t *testing.T) {
	h := sandboxtest.NewHost(t)
	dir := attackLayout(t, h, "fork-bomb", "sleep-forever")
	// The programs never end: the outcome does not depend on the timeout.
	verifyRun(t, dir, []string{"--run-timeout", "2s"},
		"/usr/bin/fork-bomb --version timed out after 2s",
		"/usr/bin/sleep-forever --version timed out after 2s")
}

func TestVerifyRunMaxSize(t *testing.T) {
	testkit.Tool(t, "qemu-aarch64-static") // the arm64 image is checked under qemu
	dir := writeLayout(t, sandboxtest.Index(t, sandboxtest.BigImage(t, linuxAmd64, 3, 1<<20), sandboxtest.BigImage(t, linuxArm64, 3, 1<<20)))
	verifyRun(t, dir, []string{"--run-max-size", "2MiB"},
		"the image unpacks to 3.0 MiB, more than the 2.0 MiB allowed (--run-max-size): nothing was run")
}

// Where the kernel refuses user namespaces, --run stops at once with one
// line saying why and what to do, and runs nothing.
func TestVerifyRunRefused(t *testing.T) {
	if !sandboxtest.Denied(os.Environ()) {
		sandboxtest.RunWithoutUserNamespaces(t, os.Environ())
		return
	}
	h := sandboxtest.NewHost(t)
	bins := t.TempDir()
	amd, err := sandboxtest.BuildAdversary(bins, "amd64", os.Environ())
	require.NoError(t, err)
	dir := writeLayout(t, sandboxtest.Index(t, sandboxtest.AttackImage(t, linuxAmd64, amd, h.Env(), "write-host-file", "dial-host")))
	code, stdout, stderr := run(t, baseEnv(), "verify", "--run", "oci:"+dir)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout, "no report: nothing was checked")
	assert.Regexp(t, `^helperbuild: verify --run: no sandbox for the image's programs \(create namespaces: .*: the user namespace limit is 0 or used up\), so nothing was run: allow user namespaces .* or run this in a VM or in a container .*\n$`, stderr)
	h.Untouched(t, stderr)
}

func TestByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"4GiB": 4 << 30, "4G": 4 << 30, "512MiB": 512 << 20, "512m": 512 << 20, "1048576": 1 << 20, "2 KiB": 2 << 10, "1TiB": 1 << 40} {
		var s byteSize
		require.NoError(t, s.Set(in), in)
		assert.Equal(t, want, int64(s), in)
	}
	for _, in := range []string{"", "0", "-1GiB", "4X", "1.5GiB", "GiB", "99999999999TiB"} {
		var s byteSize
		assert.Error(t, s.Set(in), in)
	}
	s := byteSize(4 << 30)
	assert.Equal(t, "4GiB", s.String())
	s = byteSize(1000)
	assert.Equal(t, "1000", s.String())
}
