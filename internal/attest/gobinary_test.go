package attest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildHello compiles a small program whose build info has a module
// replaced by another version (golang.org/x/sync) and one replaced by a
// directory (example.com/local), and returns its path.
func buildHello(t *testing.T) string {
	t.Helper()
	goSum := goSumLines(t, "golang.org/x/sync v0.25.0")
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": `module example.com/hello

go 1.24

require (
	example.com/local v0.0.0-00010101000000-000000000000
	golang.org/x/sync v0.24.0
)

replace example.com/local => ./local

replace golang.org/x/sync => golang.org/x/sync v0.25.0
`,
		"go.sum": goSum,
		"main.go": `package main

import (
	"example.com/local"
	"golang.org/x/sync/errgroup"
)

func main() {
	var g errgroup.Group
	g.Go(func() error { println(local.Hello); return nil })
	_ = g.Wait()
}
`,
		"local/go.mod":   "module example.com/local\n\ngo 1.24\n",
		"local/local.go": "package local\n\nconst Hello = \"hello\"\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	// Offline, from the module cache; the platform is the host's.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", msg)
	return out
}

// goSumLines returns the lines of the module's own go.sum for mod
// ("path version"), so the test program verifies against real hashes.
func goSumLines(t *testing.T, mod string) string {
	t.Helper()
	b, err := os.ReadFile("../../go.sum")
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, mod+" ") || strings.HasPrefix(line, mod+"/go.mod ") {
			out = append(out, line)
		}
	}
	require.Len(t, out, 2, "go.sum lines of %s", mod)
	return strings.Join(out, "\n") + "\n"
}

// A real binary: its build info, read from the file, gives the replaced
// modules, the toolchain this test runs with, and the file's digest.
func TestSBOMOfRealBinary(t *testing.T) {
	bin := buildHello(t)
	b, err := OpenBinary("/usr/local/bin/hello", bin)
	require.NoError(t, err)
	data, err := os.ReadFile(bin)
	require.NoError(t, err)
	assert.Equal(t, hash(t, string(data)), b.SHA256)
	assert.Equal(t, "example.com/hello", b.Info.Path)

	out, err := SBOM(SBOMSpec{Image: testImage(t, linuxV7), Binaries: []Binary{b}, Created: epoch})
	require.NoError(t, err)
	d := parseSPDX(t, out)

	bp := spdxPkg(t, d, "pkg:golang/example.com/hello")
	assert.Equal(t, "/usr/local/bin/hello", bp.PackageFileName)
	sync := spdxPkg(t, d, "pkg:golang/golang.org/x/sync@v0.25.0")
	assert.Equal(t, "replaces golang.org/x/sync v0.24.0", sync.PackageComment)
	assert.Empty(t, sync.PackageChecksums)
	assert.Equal(t, syncSum, moduleHash(sync))
	local := spdxPkg(t, d, "pkg:golang/example.com/local")
	assert.Equal(t, "example.com/local v0.0.0-00010101000000-000000000000 replaced by the directory ./local", local.PackageComment)
	assert.Empty(t, local.PackageVersion)

	full, rel := goVersion(runtime.Version())
	std := spdxPkg(t, d, "pkg:golang/stdlib@"+rel)
	assert.Equal(t, full, std.PackageVersion)
	assert.Len(t, d.Packages, 5, "image, binary, two modules, stdlib")
}

func TestReadBinaryNotGo(t *testing.T) {
	script := []byte("#!/bin/sh\necho hi\n")
	_, err := ReadBinary("/usr/bin/gitlab-runner-build", bytes.NewReader(script), int64(len(script)))
	assert.ErrorContains(t, err, "binary /usr/bin/gitlab-runner-build: Go build info")
	_, err = OpenBinary("/usr/bin/x", filepath.Join(t.TempDir(), "missing"))
	assert.ErrorContains(t, err, "binary /usr/bin/x:")
}

// The SBOM's modules of a real binary are what `go version -m` prints for
// it, as a user would check: each dep (its replacement for a => line) with
// its version and h1: hash, read by the go command, not by this package.
func TestSBOMModulesAgreeWithGoVersion(t *testing.T) {
	bin := buildHello(t)
	cmd := exec.CommandContext(t.Context(), "go", "version", "-m", bin)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	require.NoError(t, err)
	// go version -m: "\tdep\tPATH\tVERSION\tSUM" and, under a replaced
	// one, "\t=>\tPATH\tVERSION\tSUM".
	want := map[string]string{} // path@version -> sum
	var last string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.TrimPrefix(line, "\t"), "\t")
		switch {
		case len(f) >= 3 && f[0] == "dep":
			last = f[1] + "@" + f[2]
			want[last] = strings.Join(f[3:], "")
		case len(f) >= 2 && f[0] == "=>" && last != "":
			delete(want, last)
			if len(f) >= 3 && strings.HasPrefix(f[2], "v") {
				want[f[1]+"@"+f[2]] = strings.Join(f[3:], "")
			} else {
				path, _, _ := strings.Cut(last, "@")
				want[path+"@"] = "" // a directory: the path, no version, no hash
			}
		}
	}
	require.Equal(t, map[string]string{"golang.org/x/sync@v0.25.0": want["golang.org/x/sync@v0.25.0"], "example.com/local@": ""}, want,
		"go version -m %s:\n%s", bin, out)
	require.True(t, strings.HasPrefix(want["golang.org/x/sync@v0.25.0"], "h1:"))

	b, err := OpenBinary("/usr/local/bin/hello", bin)
	require.NoError(t, err)
	doc, err := SBOM(SBOMSpec{Image: testImage(t, linuxV7), Binaries: []Binary{b}, Created: epoch})
	require.NoError(t, err)
	d := parseSPDX(t, doc)
	got := map[string]string{}
	for _, p := range d.Packages {
		if p.PrimaryPackagePurpose == "LIBRARY" && p.PackageName != "stdlib" {
			got[p.PackageName+"@"+p.PackageVersion] = moduleHash(p)
		}
	}
	assert.Equal(t, want, got, "go version -m:\n%s", out)
}
