package crossbuild_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"

	"github.com/helperbuild/helperbuild/internal/crossbuild"
)

// TestBuildRejectsBeforeRunning: every case would fail differently ("no such
// file") if Build tried to run its nonexistent go command.
func TestBuildRejectsBeforeRunning(t *testing.T) {
	out := t.TempDir()
	arm6 := v1.Platform{OS: "linux", Architecture: "arm", Variant: "v6"}
	arm7 := v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	one := []crossbuild.Target{{Platform: amd64, Main: ".", Output: filepath.Join(out, "x")}}
	base := crossbuild.Options{Go: "/nonexistent/go", Env: os.Environ(), Jobs: 2}
	with := func(f func(*crossbuild.Options)) crossbuild.Options { o := base; f(&o); return o }
	tests := []struct {
		name    string
		targets []crossbuild.Target
		opts    crossbuild.Options
		wantErr string
	}{
		{name: "zero jobs", targets: one, opts: with(func(o *crossbuild.Options) { o.Jobs = 0 }), wantErr: "cross-build jobs 0: want at least 1"},
		{name: "negative jobs", targets: one, opts: with(func(o *crossbuild.Options) { o.Jobs = -1 }), wantErr: "cross-build jobs -1: want at least 1"},
		{name: "no environment", targets: one, opts: with(func(o *crossbuild.Options) { o.Env = nil }), wantErr: "cross-build environment is empty; pass the environment for go build (os.Environ())"},
		{name: "-o flag", targets: one, opts: with(func(o *crossbuild.Options) { o.Flags = []string{"-o", "x"} }), wantErr: `build flag "-o": the output path comes from each target`},
		{name: "-ldflags flag", targets: one, opts: with(func(o *crossbuild.Options) { o.Flags = []string{"--ldflags=-s"} }), wantErr: `build flag "--ldflags=-s": pass linker flags as Options.Ldflags`},
		{name: "-trimpath=false", targets: one, opts: with(func(o *crossbuild.Options) { o.Flags = []string{"-trimpath=false"} }), wantErr: `build flag "-trimpath=false": helperbuild always builds with -trimpath`},
		{name: "duplicate output", targets: []crossbuild.Target{
			{Platform: arm6, Main: "./apps/helper", Output: filepath.Join(out, "helper.linux-arm")},
			{Platform: amd64, Main: "./apps/helper", Output: filepath.Join(out, "helper.linux-amd64")},
			{Platform: arm7, Main: "./apps/helper", Output: filepath.Join(out, "sub", "..", "helper.linux-arm")},
		}, opts: base, wantErr: "build ./apps/helper for linux/arm/v6 and ./apps/helper for linux/arm/v7 both write " +
			filepath.Join(out, "helper.linux-arm") + "; add {{.Variant}} (or another distinguishing field) to the output template"},
		{name: "relative output", targets: []crossbuild.Target{{Platform: amd64, Main: ".", Output: "bin/x"}}, opts: base,
			wantErr: `build . for linux/amd64: output "bin/x" is not an absolute path`},
		{name: "no main", targets: []crossbuild.Target{{Platform: amd64, Output: filepath.Join(out, "x")}}, opts: base,
			wantErr: "target 0 ( for linux/amd64): no main package"},
		{name: "unbuildable platform", targets: []crossbuild.Target{{Platform: v1.Platform{OS: "linux", Architecture: "sparc64"}, Main: ".", Output: filepath.Join(out, "x")}}, opts: base,
			wantErr: "build .: helperbuild builds no container image for linux/sparc64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := crossbuild.Build(context.Background(), tt.targets, tt.opts)
			assert.ErrorContains(t, err, tt.wantErr)
			assert.NotContains(t, err.Error(), "nonexistent")
		})
	}

	// The same options that were rejected run the (missing) go command once fixed.
	err := crossbuild.Build(context.Background(), one, base)
	assert.ErrorContains(t, err, "build . for linux/amd64: fork/exec /nonexistent/go: no such file or directory")
	assert.NoError(t, crossbuild.Build(context.Background(), nil, base), "no targets is nothing to do")
}
