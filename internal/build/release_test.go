package build

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

var epoch = time.Unix(1700000000, 0).UTC()

// module writes a tiny main package and returns the module root.
func module(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "hello"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "hello", "main.go"), []byte(`package main

import ("fmt"; "runtime")

var version = "dev"

func main() { fmt.Println(version, runtime.GOOS+"/"+runtime.GOARCH) }
`), 0o644))
	return dir
}

func options(t *testing.T) Options {
	return Options{
		Env:     os.Environ(),
		Jobs:    2,
		Meta:    manifest.Meta{Created: epoch, Revision: "abc", Version: "v1.2.3"},
		TempDir: t.TempDir(),
	}
}

func platforms(t *testing.T, s string) []v1.Platform {
	ps, err := platform.ParseList(s)
	require.NoError(t, err)
	return ps
}

// busyboxLike is a multi-arch base in an in-process registry.
func busyboxLike(t *testing.T, archs ...string) (host, ref string) {
	t.Helper()
	host = testkit.Registry(t)
	var idx v1.ImageIndex = empty.Index
	for _, a := range archs {
		p, err := platform.Parse(a)
		require.NoError(t, err)
		img := testkit.Image(t, p, 128, 1, func(cf *v1.ConfigFile) {
			cf.Config.Env = []string{"PATH=/usr/bin:/bin"}
			cf.Config.Cmd = []string{"sh"}
		})
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	ref = host + "/base/busybox:1"
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(r, idx))
	return host, ref
}

func TestBuildOnRegistryBase(t *testing.T) {
	_, base := busyboxLike(t, "linux/amd64", "linux/arm64", "linux/arm/v7", "linux/s390x")
	dir := module(t)
	plan, err := recipe.PackagePlan(recipe.Package{Dir: dir, Main: "./cmd/hello", Base: base,
		Platforms: platforms(t, "linux/arm64,linux/amd64,linux/arm/v7"), Ldflags: "-X main.version=v1.2.3", Tags: []string{"v1.2.3"}})
	require.NoError(t, err)
	res, err := Build(context.Background(), plan, options(t))
	require.NoError(t, err)
	require.Len(t, res.Images, 1)
	img := res.Images[0]
	require.NoError(t, validate.Index(img.Index))

	im, err := img.Index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 3)
	assert.Equal(t, "linux/arm64,linux/amd64,linux/arm/v7", platform.FormatList([]v1.Platform{*im.Manifests[0].Platform, *im.Manifests[1].Platform, *im.Manifests[2].Platform}), "input order is kept")
	assert.Equal(t, "v7", im.Manifests[2].Platform.Variant)
	assert.Equal(t, base, im.Annotations[specsv1.AnnotationBaseImageName])

	for _, d := range im.Manifests {
		child, err := img.Index.Image(d.Digest)
		require.NoError(t, err)
		cf, err := child.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, []string{"sh"}, cf.Config.Cmd, "base config kept")
		assert.Empty(t, cf.Config.Entrypoint)
		layers, err := child.Layers()
		require.NoError(t, err)
		require.Len(t, layers, 2, "base layer + the binary")
		m, err := child.Manifest()
		require.NoError(t, err)
		assert.NotEmpty(t, m.Annotations[specsv1.AnnotationBaseImageDigest])
		assert.NotEqual(t, im.Annotations[specsv1.AnnotationBaseImageDigest], m.Annotations[specsv1.AnnotationBaseImageDigest], "each manifest names its own platform's base")
	}

	// The binary in each layer is for its platform.
	for _, p := range img.Platforms {
		child, err := img.Index.Image(p.Digest)
		require.NoError(t, err)
		layers, _ := child.Layers()
		path := extract(t, layers[1], "usr/bin/hello")
		require.NoError(t, elfcheck.CheckFile(path, p.Platform))

		// The compressed size is what a pull downloads: the config and every
		// layer (the base's too), counted here from the blobs themselves.
		raw, err := child.RawConfigFile()
		require.NoError(t, err)
		want := int64(len(raw))
		for _, l := range layers {
			n, err := l.Size()
			require.NoError(t, err)
			want += n
		}
		assert.Equal(t, want, p.CompressedSize, platform.Format(p.Platform))
		manifestSize, err := child.Size()
		require.NoError(t, err)
		assert.Equal(t, manifestSize, p.Size, "Size stays the manifest's own")
		assert.Greater(t, p.CompressedSize, p.Size)
	}
}

// fakeGo is a go command that says on the returned channel that it
// started (through a FIFO, so the test waits on the event, not on time),
// then runs rest: "exit 1" fails at once, "exec sleep 600" runs until
// killed.
func fakeGo(t *testing.T, rest string) (string, <-chan struct{}) {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	script := filepath.Join(dir, "go")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho started > "+fifo+"\n"+rest+"\n"), 0o755))
	// Opened read-write, so the open does not wait for a writer; held open
	// (and read) until the test ends, so every go build's echo goes through.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	started := make(chan struct{})
	go func() {
		buf := make([]byte, 64)
		if _, err := f.Read(buf); err != nil {
			return
		}
		close(started)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
		}
	}()
	return script, started
}

// quietUntilResolved checks that nothing of a compile showed: no
// "compiled" line, no platform in the compiling stage.
func quietUntilResolved(t *testing.T, logs string, events []progress.Event) {
	t.Helper()
	assert.NotContains(t, logs, "compiled", "no compile shows before the resolve has passed")
	for _, e := range events {
		assert.NotEqual(t, progress.Compiling, e.Stage, "no platform shows as compiling: %+v", e)
	}
}

// A base that lacks a platform is the error reported, whether or not a
// compile started beside the resolve, and nothing of that compile shows.
func TestBaseMissingPlatformFailsBeforeCompiling(t *testing.T) {
	_, base := busyboxLike(t, "linux/amd64", "linux/arm64")
	dir := module(t)
	goCmd, _ := fakeGo(t, "exit 1")
	plan, err := recipe.PackagePlan(recipe.Package{Dir: dir, Main: "./cmd/hello", Base: base, Platforms: platforms(t, "linux/amd64,linux/s390x")})
	require.NoError(t, err)
	opts := options(t)
	opts.Go = goCmd
	var logs testkit.Buffer
	var events recorded
	opts.Logger, opts.Progress = slog.New(slog.NewTextHandler(&logs, nil)), &events
	_, err = Build(context.Background(), plan, opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no linux/s390x (it offers: linux/amd64,linux/arm64)")
	quietUntilResolved(t, logs.String(), events.all())
}

// The preflight (push's permission check) runs beside the base lookups and
// beside the compiles, which start with it; its failure is the one
// reported, even when a base fails too or a compile failed first, and it
// stops the compiles: Build returns once they have ended, and nothing of
// them shows.
func TestPreflightFailsBeforeCompiling(t *testing.T) {
	_, base := busyboxLike(t, "linux/amd64", "linux/arm64")
	tests := []struct {
		name      string
		platforms string
		goRest    string
	}{
		{name: "bases fine, go runs on", platforms: "linux/amd64,linux/arm64", goRest: "exec sleep 600"},
		{name: "bases fine, go failed", platforms: "linux/amd64,linux/arm64", goRest: "exit 1"},
		{name: "a base lacks a platform too", platforms: "linux/amd64,linux/s390x", goRest: "exec sleep 600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base, Platforms: platforms(t, tt.platforms)})
			require.NoError(t, err)
			opts := options(t)
			goCmd, started := fakeGo(t, tt.goRest)
			opts.Go = goCmd
			var logs testkit.Buffer
			var events recorded
			opts.Logger, opts.Progress = slog.New(slog.NewTextHandler(&logs, nil)), &events
			opts.Preflight = func(ctx context.Context) error {
				select { // the compiles started beside the preflight
				case <-started:
				case <-time.After(2 * time.Minute): // a bound (TestCompilesStartBesideTheResolve asserts the start)
				}
				return errors.New("registry.example: cannot push")
			}
			_, err = Build(context.Background(), plan, opts)
			assert.EqualError(t, err, "registry.example: cannot push")
			quietUntilResolved(t, logs.String(), events.all())
		})
	}
}

// With its platforms named, a build starts compiling while the resolve
// still waits on the registry: the preflight here returns only once a go
// build has started. What was compiled shows after the resolve's end.
func TestCompilesStartBesideTheResolve(t *testing.T) {
	_, base := busyboxLike(t, "linux/amd64", "linux/arm64")
	realGo, err := exec.LookPath("go")
	require.NoError(t, err)
	goCmd, started := fakeGo(t, `exec "`+realGo+`" "$@"`)
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base, Platforms: platforms(t, "linux/amd64,linux/arm64")})
	require.NoError(t, err)
	opts := options(t)
	opts.Go = goCmd
	var events recorded
	opts.Progress = &events
	opts.Preflight = func(ctx context.Context) error {
		select {
		case <-started:
			return nil
		case <-time.After(2 * time.Minute): // a bound, not a measurement
			return errors.New("no go build started beside the preflight")
		}
	}
	res, err := Build(context.Background(), plan, opts)
	require.NoError(t, err)
	require.Len(t, res.Images[0].Platforms, 2)
	resolved, compiling := -1, -1
	for i, e := range events.all() {
		if e.Kind == progress.KindPhaseEnd && e.Phase == "resolve" && resolved < 0 {
			resolved = i
		}
		if e.Stage == progress.Compiling && compiling < 0 {
			compiling = i
		}
	}
	require.GreaterOrEqual(t, compiling, 0, "the platforms showed as compiling")
	assert.Less(t, resolved, compiling, "a compile shows only after the resolve's end")
}

func TestAllPlatformsOfTheBase(t *testing.T) {
	_, base := busyboxLike(t, "linux/amd64", "linux/arm64")
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base})
	require.NoError(t, err)
	res, err := Build(context.Background(), plan, options(t))
	require.NoError(t, err)
	assert.Len(t, res.Images[0].Platforms, 2)

	plan, err = recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch"})
	require.NoError(t, err)
	_, err = Build(context.Background(), plan, options(t))
	assert.ErrorContains(t, err, "give --platforms")
}

func TestScratchEntrypointAndReproducible(t *testing.T) {
	build := func() v1.Hash {
		plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/riscv64"), Flags: []string{"-trimpath"}})
		require.NoError(t, err)
		res, err := Build(context.Background(), plan, options(t))
		require.NoError(t, err)
		child, err := res.Images[0].Index.Image(res.Images[0].Platforms[0].Digest)
		require.NoError(t, err)
		cf, err := child.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, []string{"/usr/bin/hello"}, cf.Config.Entrypoint)
		assert.Equal(t, epoch, cf.Created.Time)
		return res.Images[0].Digest
	}
	// Two different module directories, same source, same epoch.
	assert.Equal(t, build(), build())
}

// With one job the amd64 image waits for a slot the s390x compile holds;
// the failed compile must free it, not leave Build waiting.
func TestCompileErrorNamesPlatform(t *testing.T) {
	dir := module(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "hello", "broken_s390x.go"), []byte("package main\n\nfunc broken() { undefinedThing() }\n"), 0o644))
	plan, err := recipe.PackagePlan(recipe.Package{Dir: dir, Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/s390x")})
	require.NoError(t, err)
	for _, jobs := range []int{1, 2} {
		opts := options(t)
		opts.Jobs = jobs
		_, err = Build(context.Background(), plan, opts)
		require.Error(t, err, "jobs %d", jobs)
		assert.Contains(t, err.Error(), "linux/s390x")
		assert.Contains(t, err.Error(), "undefinedThing")
	}
}

func TestAssemblySlots(t *testing.T) {
	tests := []struct{ jobs, left, want int }{
		{jobs: 2, left: 5, want: 0}, // a full wave of links: no assembly
		{jobs: 2, left: 2, want: 0},
		{jobs: 2, left: 1, want: 1}, // the last link runs alone
		{jobs: 2, left: 0, want: 2},
		{jobs: 8, left: 5, want: 3}, // more cores than platforms
		{jobs: 1, left: 1, want: 0},
		{jobs: 1, left: 0, want: 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, assemblySlots(tt.jobs, tt.left), "jobs %d, left %d", tt.jobs, tt.left)
	}
}

func TestReadBaseOnce(t *testing.T) {
	// A layout base read through imageref.Read: layout entries named by tag.
	a, err := imageref.Parse("oci:/nonexistent", nil)
	require.NoError(t, err)
	_, err = imageref.Read(context.Background(), a, imageref.Options{})
	assert.ErrorContains(t, err, "oci:/nonexistent: no such layout: /nonexistent does not exist")
	assert.ErrorIs(t, err, imageref.ErrNotFound, "a layout that is not there is a reference not found (exit 3)")
}

// TestBaseMissingPlatformsAllNamed: a base lacking three of the release's
// platforms is one line naming all three (issue 25: it named one), before
// anything compiles.
func TestBaseMissingPlatformsAllNamed(t *testing.T) {
	_, base := busyboxLike(t, "linux/amd64", "linux/arm64")
	dir := module(t)
	plan, err := recipe.PackagePlan(recipe.Package{Dir: dir, Main: "./cmd/hello", Base: base,
		Platforms: platforms(t, "linux/amd64,linux/arm/v7,linux/ppc64le,linux/s390x")})
	require.NoError(t, err)
	opts := options(t)
	opts.Go = filepath.Join(t.TempDir(), "no-go") // never run
	_, err = Build(context.Background(), plan, opts)
	require.Error(t, err)
	assert.Equal(t, "image hello: base "+base+" has no linux/arm/v7,linux/ppc64le,linux/s390x (it offers: linux/amd64,linux/arm64): drop those platforms, use a base that has them, or give each a base of its own with base: {linux/arm/v7: REF, ...} under the image in helperbuild.yaml", err.Error())
}
