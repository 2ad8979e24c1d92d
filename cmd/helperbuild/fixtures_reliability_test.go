package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// The helpers of the reliability and bad-input tests are prefixed "rel" so
// they cannot collide with the other CLI tests of this package.

// relGoEnv is the Go toolchain's cache locations, resolved once: the CLI
// runs `go build` with a private HOME, and must still find the build cache.
var relGoEnv = sync.OnceValues(func() (map[string]string, error) {
	out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	m := map[string]string{}
	return m, json.Unmarshal(out, &m)
})

// relEnv is a closed environment for one CLI run: a private HOME, helperbuild
// cache, Docker config and TMPDIR (the process TMPDIR too, so a temporary
// directory left behind is seen), Go's real caches, no CI variables, no
// network for modules. extra is appended (later values win).
func relEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	goEnv, err := relGoEnv()
	require.NoError(t, err)
	home, tmp := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, ".docker"), 0o700))
	// Go's telemetry off in this HOME: otherwise each go command the run
	// starts may fork a detached telemetry child that writes under
	// $HOME/.config/go/telemetry after the run ended, racing TempDir's
	// removal (seen: "unlinkat …/telemetry/local: directory not empty").
	telemetry := filepath.Join(home, ".config", "go", "telemetry")
	require.NoError(t, os.MkdirAll(telemetry, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(telemetry, "mode"), []byte("off"), 0o600))
	t.Setenv("TMPDIR", tmp)
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"DOCKER_CONFIG=" + filepath.Join(home, ".docker"),
		"TMPDIR=" + tmp,
		"GOCACHE=" + goEnv["GOCACHE"],
		"GOMODCACHE=" + goEnv["GOMODCACHE"],
		"GOFLAGS=-buildvcs=false",
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"SOURCE_DATE_EPOCH=0",
	}
	t.Cleanup(func() {
		left, _ := os.ReadDir(tmp)
		for _, e := range left {
			t.Errorf("temporary file left behind: %s", filepath.Join(tmp, e.Name()))
		}
	})
	return append(env, extra...)
}

// relModule writes a Go module with a main package at ./cmd/app.
func relModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	relWrite(t, dir, map[string]string{
		"go.mod":          "module example.com/app\n\ngo 1.24\n",
		"cmd/app/main.go": "package main\n\nfunc main() { println(\"app\") }\n",
	})
	return dir
}

func relWrite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// relResult is what one CLI run produced.
type relResult struct {
	code           int
	stdout, stderr string
}

// relRun runs the CLI in-process; a panic fails the test instead of
// crashing the test binary.
func relRun(t *testing.T, ctx context.Context, env []string, args ...string) (res relResult) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("helperbuild %q panicked: %v\n%s", args, p, debug.Stack())
		}
	}()
	res.code = Run(ctx, args, &stdout, &stderr, env)
	res.stdout, res.stderr = stdout.String(), stderr.String()
	return res
}

// relSnapshot records every file under dir: path, mode, and content hash.
func relSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h := sha256.Sum256(data)
			sum = hex.EncodeToString(h[:])
		}
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%s %s", info.Mode(), sum)
		return nil
	}))
	return out
}

// relImage is a random image whose config says linux/amd64.
func relImage(t *testing.T) v1.Image {
	t.Helper()
	return mutate.MediaType(testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 512, 1), types.OCIManifestSchema1)
}

// relAmd64Index is an OCI index holding linux/amd64 only.
func relAmd64Index(t *testing.T) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	return mutate.AppendManifests(idx, mutate.IndexAddendum{Add: relImage(t),
		Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
}

// relBaseLayout writes an OCI layout whose one entry is a linux/amd64-only index.
func relBaseLayout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendIndex(relAmd64Index(t)))
	return dir
}

// relRegistry starts an in-process registry; with a user, every request needs
// HTTP basic authentication with user and password.
func relRegistry(t *testing.T, user, password string) string {
	t.Helper()
	if user != "" {
		return testkit.Registry(t, testkit.BasicAuth(user, password))
	}
	return testkit.Registry(t)
}

// relPushIndex puts idx at ref (with credentials when user is set).
func relPushIndex(t *testing.T, ref string, idx v1.ImageIndex, user, password string) {
	t.Helper()
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	var opts []remote.Option
	if user != "" {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: user, Password: password}))
	}
	require.NoError(t, remote.WriteIndex(r, idx, opts...))
}

// relLines splits output into its non-empty lines.
func relLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
