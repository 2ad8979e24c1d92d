package crossbuild_test

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/crossbuild"
	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// writeModule writes a module example.com/hello with the given files into a
// new temporary directory and returns it.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/hello\n\ngo 1.26\n" + files["go.mod.extra"]
	delete(files, "go.mod.extra")
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return dir
}

const helloMain = `package main

import "fmt"

var version = "dev"

func main() { fmt.Println("hello", version) }
`

func mustParse(t *testing.T, s string) v1.Platform {
	t.Helper()
	p, err := platform.Parse(s)
	require.NoError(t, err)
	return p
}

func TestBuildPlatforms(t *testing.T) {
	dir := writeModule(t, map[string]string{"cmd/hello/main.go": helloMain})
	out := t.TempDir()
	specs := []string{"linux/amd64", "linux/arm64", "linux/arm/v7"}
	targets := make([]crossbuild.Target, len(specs))
	for i, s := range specs {
		targets[i] = crossbuild.Target{
			Platform: mustParse(t, s),
			Main:     "./cmd/hello",
			Output:   filepath.Join(out, "not", "yet", "hello-"+strings.ReplaceAll(s, "/", "-")),
		}
	}
	calls := make([]atomic.Int32, len(targets))
	opts := crossbuild.Options{
		Dir: dir,
		// A stray GOARCH in CI must not change what is built.
		Env:     append(os.Environ(), "GOARCH=386", "GOARM=5"),
		Flags:   []string{"-trimpath", "-tags", "netgo"},
		Ldflags: "-s -w -X main.version=1.2.3",
		Jobs:    2,
		After: func(ctx context.Context, i int, r crossbuild.Result) error {
			calls[i].Add(1)
			if r.Duration <= 0 {
				return fmt.Errorf("target %d: go build ran for %v", i, r.Duration)
			}
			// The binary of target i is complete when After runs.
			return elfcheck.CheckFile(targets[i].Output, targets[i].Platform)
		},
	}
	require.NoError(t, crossbuild.Build(context.Background(), targets, opts))

	for i, target := range targets {
		assert.Equal(t, int32(1), calls[i].Load(), "After calls for target %d", i)
		require.NoError(t, elfcheck.CheckFile(target.Output, target.Platform))
		info, err := buildinfo.ReadFile(target.Output)
		require.NoError(t, err)
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		assert.Equal(t, "true", settings["-trimpath"])
		assert.Equal(t, "netgo", settings["-tags"])
		assert.NotContains(t, settings, "-ldflags", "with -trimpath go does not record -ldflags")
		assert.Equal(t, "0", settings["CGO_ENABLED"])
	}

	// The arm target got GOARM=7 from its platform, not the stray GOARM=5.
	info, ok, err := elfcheck.GoInfo(openFile(t, targets[2].Output))
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, elfcheck.CheckGo(info, targets[2].Platform))

	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		got, err := exec.Command(targets[0].Output).Output()
		require.NoError(t, err)
		assert.Equal(t, "hello 1.2.3\n", string(got), "ldflags reach the linker")
	}
}

func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestBuildCompileError(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"main.go": helloMain,
		"broken_arm64.go": `package main

func init() { undefinedOnArm64() }
`,
	})
	out := t.TempDir()
	targets := []crossbuild.Target{
		{Platform: mustParse(t, "linux/amd64"), Main: ".", Output: filepath.Join(out, "amd64")},
		{Platform: mustParse(t, "linux/arm64"), Main: ".", Output: filepath.Join(out, "arm64")},
	}
	var after atomic.Int32
	err := crossbuild.Build(context.Background(), targets, crossbuild.Options{
		Dir: dir, Env: os.Environ(), Jobs: 1,
		After: func(context.Context, int, crossbuild.Result) error { after.Add(1); return nil },
	})
	require.Error(t, err)
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "build . for linux/arm64: exit status 1\n"), msg)
	assert.Contains(t, msg, "broken_arm64.go:3:15: undefined: undefinedOnArm64")
	assert.NotContains(t, msg, "linux/amd64")
	var exitErr *exec.ExitError
	assert.ErrorAs(t, err, &exitErr)
	assert.Equal(t, int32(1), after.Load(), "After runs for the target that compiled, not for the broken one")
	assert.NoFileExists(t, targets[1].Output)
}

func TestBuildAfterError(t *testing.T) {
	dir := writeModule(t, map[string]string{"main.go": helloMain})
	out := t.TempDir()
	boom := errors.New("disk full")
	err := crossbuild.Build(context.Background(), []crossbuild.Target{
		{Platform: mustParse(t, "linux/amd64"), Main: ".", Output: filepath.Join(out, "hello")},
	}, crossbuild.Options{
		Dir: dir, Env: os.Environ(), Jobs: 1,
		After: func(context.Context, int, crossbuild.Result) error { return boom },
	})
	assert.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "disk full", "the callback names its own context")
}

// TestUpToDate: Result.UpToDate says whether go build left the output as
// it was (everything from go's cache) in both directions: a first build, a
// changed -X value and a removed output are built; an unchanged re-run is
// up to date.
func TestUpToDate(t *testing.T) {
	dir := writeModule(t, map[string]string{"cmd/hello/main.go": helloMain})
	out := filepath.Join(t.TempDir(), "hello")
	target := []crossbuild.Target{{Platform: mustParse(t, "linux/amd64"), Main: "./cmd/hello", Output: out}}
	build := func(ldflags string) bool {
		t.Helper()
		var got []crossbuild.Result
		require.NoError(t, crossbuild.Build(t.Context(), target, crossbuild.Options{Dir: dir, Env: os.Environ(), Jobs: 1, Ldflags: ldflags,
			After: func(_ context.Context, _ int, r crossbuild.Result) error { got = append(got, r); return nil }}))
		require.Len(t, got, 1)
		return got[0].UpToDate
	}
	assert.False(t, build("-X main.version=1"), "first build")
	assert.True(t, build("-X main.version=1"), "unchanged re-run")
	assert.False(t, build("-X main.version=2"), "another version: relinked")
	assert.True(t, build("-X main.version=2"))
	require.NoError(t, os.Remove(out))
	assert.False(t, build("-X main.version=2"), "output removed: written again")
}
