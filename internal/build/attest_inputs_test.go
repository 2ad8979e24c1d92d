package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attest"
)

// TestToolchainFromBuildInfo: the provenance names the Go its binaries
// record, without the experiments, and asks the go command only when the
// binaries record none or two different ones.
func TestToolchainFromBuildInfo(t *testing.T) {
	bin := func(v string) attest.Binary { return attest.Binary{Info: &debug.BuildInfo{GoVersion: v}} }
	for _, tt := range []struct {
		name string
		bins []attest.Binary
		want string
		asks bool
	}{
		{"one binary", []attest.Binary{bin("go1.26.8")}, "go1.26.8", false},
		{"two that agree", []attest.Binary{bin("go1.26.8"), bin("go1.26.8")}, "go1.26.8", false},
		{"an experiment", []attest.Binary{bin("go1.26.8 X:jsonv2")}, "go1.26.8", false},
		{"two toolchains", []attest.Binary{bin("go1.26.8"), bin("go1.25.4")}, "go1.27.0", true},
		{"no build info", []attest.Binary{{}}, "go1.27.0", true},
		{"an empty version", []attest.Binary{bin("")}, "go1.27.0", true},
		{"no binary", nil, "go1.27.0", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			a := &attestor{goVersion: func() (string, error) { asked = true; return "go1.27.0", nil }}
			got, err := a.toolchain(tt.bins)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.asks, asked, "whether go env GOVERSION was asked")
		})
	}
	a := &attestor{goVersion: func() (string, error) { return "", errors.New("no go") }}
	_, err := a.toolchain(nil)
	assert.ErrorContains(t, err, "no go", "the go command's failure is the provenance's")
}

// TestGoVersionStartsNoChildUnlessAsked: the go command runs on the first
// call only, once however many calls, and never after stop.
func TestGoVersionStartsNoChildUnlessAsked(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	goCmd := filepath.Join(dir, "go")
	require.NoError(t, os.WriteFile(goCmd, []byte("#!/bin/sh\necho run >> \""+runs+"\"\necho go1.42.0\n"), 0o755))
	count := func() int {
		data, err := os.ReadFile(runs)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		require.NoError(t, err)
		return len(data) / len("run\n")
	}

	_, stop := goVersion(context.Background(), goCmd, os.Environ())
	stop()
	assert.Equal(t, 0, count(), "never asked: no child")

	get, stop := goVersion(context.Background(), goCmd, os.Environ())
	for range 2 {
		v, err := get()
		require.NoError(t, err)
		assert.Equal(t, "go1.42.0", v)
	}
	stop()
	assert.Equal(t, 1, count(), "asked twice: one child")

	get, stop = goVersion(context.Background(), goCmd, os.Environ())
	stop()
	_, err := get()
	assert.Error(t, err, "asked after stop")
	assert.Equal(t, 1, count(), "no child after stop")
}
