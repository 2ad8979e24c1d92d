package crossbuild_test

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/crossbuild"
	"github.com/helperbuild/helperbuild/internal/execerr"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// privateModule writes a module that imports gitlab.example.com/private/lib,
// recorded in go.mod and go.sum as a real project records it, and returns
// its directory.
func privateModule(t *testing.T) string {
	t.Helper()
	const sum = "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	return writeModule(t, map[string]string{
		"go.mod.extra": "require gitlab.example.com/private/lib v1.0.0\n",
		"go.sum":       "gitlab.example.com/private/lib v1.0.0 " + sum + "\ngitlab.example.com/private/lib v1.0.0/go.mod " + sum + "\n",
		"cmd/app/main.go": `package main

import "gitlab.example.com/private/lib"

func main() { lib.Run() }
`,
	})
}

// refusingProxy is a module proxy on 127.0.0.1 that answers every request
// with status and body, as a proxy refuses a module it may not serve.
func refusingProxy(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// goEnv is the environment of a build that must fetch its modules from
// proxy: an empty module cache, no checksum database.
func goEnv(t *testing.T, proxy string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOPROXY", "GOMODCACHE", "GOSUMDB", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOFLAGS", "GOTOOLCHAIN":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "GOPROXY="+proxy, "GOMODCACHE="+t.TempDir(), "GOSUMDB=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
}

// The compile error of a module the proxy refuses, as the user reads it:
// the package and platform, go's lines without its download noise, then
// the ways out.
func TestBuildProxyRefusesGolden(t *testing.T) {
	dir := privateModule(t)
	proxy := refusingProxy(t, http.StatusForbidden, "access to gitlab.example.com/private/lib denied by policy\n")
	err := crossbuild.Build(context.Background(), []crossbuild.Target{
		{Platform: mustParse(t, "linux/arm64"), Main: "./cmd/app", Output: filepath.Join(t.TempDir(), "app")},
	}, crossbuild.Options{Dir: dir, Env: goEnv(t, proxy), Jobs: 1})
	require.Error(t, err)
	assert.True(t, execerr.Is(err))
	got := strings.ReplaceAll(err.Error(), proxy, "http://PROXY") + "\n"
	golden := filepath.Join("testdata", "proxy-refuses.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, rerr := os.ReadFile(golden)
	require.NoError(t, rerr)
	assert.Equal(t, string(want), got)
	assert.NotContains(t, got, "go: downloading", "download noise is dropped")
}

// A go.sum without the entry the build needs: the way out is go mod tidy.
func TestBuildMissingGoSum(t *testing.T) {
	dir := privateModule(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "go.sum")))
	err := crossbuild.Build(context.Background(), []crossbuild.Target{
		{Platform: mustParse(t, "linux/amd64"), Main: "./cmd/app", Output: filepath.Join(t.TempDir(), "app")},
	}, crossbuild.Options{Dir: dir, Env: goEnv(t, "off"), Jobs: 1})
	require.Error(t, err)
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "build ./cmd/app for linux/amd64: exit status 1\n  "), msg)
	assert.Contains(t, msg, "missing go.sum entry")
	assert.True(t, strings.HasSuffix(msg, "\ngo.sum lacks an entry the build needs: run go mod tidy in the module and commit go.mod and go.sum"), msg)
}
