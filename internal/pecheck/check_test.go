package pecheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// build compiles a tiny main package with goenv (platform.GoEnv's variables
// last) and extra flags, and returns the binary's path.
func build(t *testing.T, name string, goenv []string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644))
	out := filepath.Join(dir, name)
	args := append([]string{"build", "-trimpath", "-o", out}, flags...)
	cmd := exec.CommandContext(context.Background(), "go", append(args, ".")...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0"), goenv...)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build %s: %s", strings.Join(goenv, " "), b)
	return out
}

func goenv(t *testing.T, s string) []string {
	t.Helper()
	p, err := platform.Parse(s)
	require.NoError(t, err)
	env, err := platform.GoEnv(p)
	require.NoError(t, err)
	return env
}

// Real Go builds agree with Check both ways: each passes for its own
// platform, fails for the other architecture, and a GUI-subsystem build or
// a Linux binary fails for both.
func TestCheckRealBinaries(t *testing.T) {
	amd64 := build(t, "a.exe", goenv(t, "windows/amd64"))
	arm64 := build(t, "b.exe", goenv(t, "windows/arm64"))
	gui := build(t, "g.exe", goenv(t, "windows/amd64"), "-ldflags=-H=windowsgui")
	elf := build(t, "l", goenv(t, "linux/amd64"))
	wAMD64, _ := platform.Parse("windows/amd64:10.0.20348")
	wARM64, _ := platform.Parse("windows/arm64")

	require.NoError(t, CheckFile(amd64, wAMD64))
	require.NoError(t, CheckFile(arm64, wARM64))
	err := CheckFile(amd64, wARM64)
	var mm *MismatchError
	require.ErrorAs(t, err, &mm)
	assert.ErrorContains(t, err, "binary is PE executable for amd64 (console), not windows/arm64")
	assert.ErrorContains(t, CheckFile(arm64, wAMD64), "binary is PE executable for arm64 (console), not windows/amd64")
	assert.ErrorContains(t, CheckFile(gui, wAMD64), "binary is PE executable for amd64 (GUI), not windows/amd64")
	err = CheckFile(elf, wAMD64)
	assert.True(t, errors.Is(err, ErrNotPE), "%v", err)
	assert.ErrorContains(t, err, elf)

	for path, want := range map[string]string{amd64: "windows/amd64", arm64: "windows/arm64"} {
		f, err := os.Open(path)
		require.NoError(t, err)
		info, ok, err := GoInfo(f)
		f.Close()
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "windows", info.GOOS)
		assert.Equal(t, "example.com/hello", info.Path)
		p, _ := platform.Parse(want)
		assert.NoError(t, CheckGo(info, p))
		other, _ := platform.Parse(map[string]string{"windows/amd64": "windows/arm64", "windows/arm64": "windows/amd64"}[want])
		assert.ErrorContains(t, CheckGo(info, other), fmt.Sprintf("a Go build for %s", want))
		lin, _ := platform.Parse(strings.Replace(want, "windows", "linux", 1))
		assert.Error(t, CheckGo(info, lin), "a Windows build is no Linux binary")
	}
	v3, _ := platform.Parse("windows/amd64/v3")
	f, err := os.Open(amd64)
	require.NoError(t, err)
	defer f.Close()
	info, _, err := GoInfo(f)
	require.NoError(t, err)
	assert.ErrorContains(t, CheckGo(info, v3), "GOAMD64=v1", "a v1 build is not a v3 one")
}

func TestCheckRefuses(t *testing.T) {
	w, _ := platform.Parse("windows/amd64")
	for _, in := range [][]byte{nil, []byte("MZ"), []byte("\x7fELF\x02\x01\x01"), bytes.Repeat([]byte{0}, 512)} {
		err := Check(bytes.NewReader(in), w)
		assert.True(t, errors.Is(err, ErrNotPE), "%q: %v", in, err)
	}
	lin, _ := platform.Parse("linux/amd64")
	assert.ErrorContains(t, Check(bytes.NewReader(nil), lin), "no PE expectations for platform linux/amd64")
}

func FuzzReadHeader(f *testing.F) {
	f.Add([]byte("MZ"))
	f.Add(append([]byte("MZ"), bytes.Repeat([]byte{0}, 128)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadHeader(bytes.NewReader(b))
		if err != nil && !errors.Is(err, ErrNotPE) {
			t.Fatalf("error not wrapping ErrNotPE: %v", err)
		}
		_ = h.Describe()
		_, _, _ = GoInfo(bytes.NewReader(b))
	})
}
