package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/release"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// run drives the CLI like a user would, with a fixed environment.
func run(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, &out, &errb, env)
	return code, out.String(), errb.String()
}

// baseEnv is a minimal environment: PATH and Go's caches, nothing from CI.
func baseEnv(extra ...string) []string {
	env := []string{"SOURCE_DATE_EPOCH=1700000000", "XDG_CACHE_HOME=" + cacheRoot}
	for _, k := range []string{"PATH", "HOME", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// testRevision is the commit the CLI tests' helperbuild says it was built from.
const testRevision = "0123456789abcdef0123456789abcdef01234567"

// cacheRoot is the CLI tests' shared helperbuild cache, so a re-run hits
// it. TestMain makes it (not a sandbox's init, which is this binary too).
var cacheRoot string

func TestMain(m *testing.M) {
	// verify --run re-executes this binary as the sandbox's init.
	if code, ok := sandbox.Init(os.Args); ok {
		os.Exit(code)
	}
	if err := sandboxtest.DenyIfAsked(os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// A development build's stamp, as make build writes it (init pins its
	// CI template to the commit); set before any test runs.
	revision = testRevision
	var err error
	if cacheRoot, err = os.MkdirTemp("", "helperbuild-cli-cache-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(cacheRoot)
	os.Exit(code)
}

// helloModule writes a module with a main package at ./cmd/hello and chdirs into it.
func helloModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "hello"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "hello", "main.go"), []byte("package main\n\nimport \"fmt\"\n\nvar version = \"dev\"\n\nfunc main() { fmt.Println(version) }\n"), 0o644))
	t.Chdir(dir)
	return dir
}

func startRegistry(t *testing.T) (host string, uploads *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	host = testkit.Registry(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/blobs/uploads/") && (r.Method == http.MethodPatch || r.Method == http.MethodPut) && r.ContentLength != 0 {
				n.Add(1)
			}
			reg.ServeHTTP(w, r)
		})
	})
	return host, &n
}

func TestPushConfigFree(t *testing.T) {
	host, uploads := startRegistry(t)
	helloModule(t)
	meta := filepath.Join(t.TempDir(), "meta.json")
	// A cache of its own: the first push must write (and upload while
	// writing) its layers even when -count runs this test again.
	env := baseEnv("XDG_CACHE_HOME=" + t.TempDir())
	args := []string{"push", "--platforms", "linux/amd64,linux/arm64,linux/arm", "--base", "scratch",
		"--tag", host + "/group/hello:v1.2.3", "--tag", host + "/group/hello:latest",
		"--ldflags", "-X main.version={{.Version}}", "--version", "v1.2.3", "--metadata-file", meta, "-v", "./cmd/hello"}
	code, stdout, stderr := run(t, env, args...)
	require.Equal(t, 0, code, stderr)
	// The platform linked last went up while its layer was written (-v shows it).
	assert.Contains(t, stderr, "layer uploaded while written")

	ref, err := name.ParseReference(host + "/group/hello:v1.2.3")
	require.NoError(t, err)
	idx, err := remote.Index(ref)
	require.NoError(t, err)
	require.NoError(t, validate.Index(idx))
	digest, _ := idx.Digest()
	assert.Contains(t, stdout, host+"/group/hello@"+digest.String())
	assert.Contains(t, stdout, "linux/arm/v7")
	latest, err := remote.Head(testkit.Ref(t, host+"/group/hello:latest"))
	require.NoError(t, err)
	assert.Equal(t, digest, latest.Digest)

	var m release.Metadata
	data, err := os.ReadFile(meta)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &m))
	require.Len(t, m.Images, 1)
	assert.Equal(t, digest.String(), m.Images[0].Digest)
	assert.Equal(t, []string{host + "/group/hello:v1.2.3", host + "/group/hello:latest"}, m.Images[0].Tags)
	require.Len(t, m.Images[0].Platforms, 3)
	assert.Equal(t, "linux/arm/v7", m.Images[0].Platforms[2].Platform)

	// Same commit again: same digest, and no blob is uploaded.
	before := uploads.Load()
	require.Positive(t, before)
	code, stdout2, stderr := run(t, env, args...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, stdout, stdout2)
	assert.Equal(t, before, uploads.Load(), "a re-push uploads nothing")
}

func TestPushRecipe(t *testing.T) {
	host, _ := startRegistry(t)
	dir := helloModule(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(`ARG BASE_IMAGE=scratch
FROM $BASE_IMAGE
ARG TARGETOS
ARG TARGETARCH
COPY --from=bins --chmod=755 hello-${TARGETOS}-${TARGETARCH} /usr/bin/hello
ENTRYPOINT ["/usr/bin/hello"]
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "helperbuild.yaml"), []byte(`platforms: [linux/amd64, linux/arm64]
build:
  ldflags: -X main.version={{.Version}}
binaries:
  - main: ./cmd/hello
    output: hello-{{.OS}}-{{.Arch}}
images:
  - name: hello
    dockerfile: Dockerfile
    contexts: {bins: "binaries:"}
    tags: ["{{.Version}}", latest]
    platform_tags: ["{{.GitLabArch}}-{{.Version}}"]
`), 0o644))
	// An extra --tag tags every image too (it was silently ignored).
	code, stdout, stderr := run(t, baseEnv("CI_REGISTRY_IMAGE="+host+"/group", "CI_COMMIT_TAG=v2.0.0"), "push", "--tag", "stable")
	require.Equal(t, 0, code, stderr)
	idx, err := remote.Index(testkit.Ref(t, host+"/group/hello:v2.0.0"))
	require.NoError(t, err)
	digest, err := idx.Digest()
	require.NoError(t, err)
	stable, err := remote.Head(testkit.Ref(t, host+"/group/hello:stable"))
	require.NoError(t, err)
	assert.Equal(t, digest, stable.Digest, "--tag stable points at the index")
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	for i, tag := range []string{"x86_64-v2.0.0", "arm64-v2.0.0"} {
		desc, err := remote.Head(testkit.Ref(t, host+"/group/hello:"+tag))
		require.NoError(t, err, tag)
		assert.Equal(t, im.Manifests[i].Digest, desc.Digest, tag)
	}
	assert.Contains(t, stdout, "tags: "+host+"/group/hello:v2.0.0 "+host+"/group/hello:latest "+host+"/group/hello:stable")
}

func TestBuildToLayoutAndArchive(t *testing.T) {
	helloModule(t)
	out := filepath.Join(t.TempDir(), "oci")
	code, stdout, stderr := run(t, baseEnv(), "build", "--platforms", "linux/s390x,linux/ppc64le", "--base", "scratch", "--output", "oci:"+out, "--tag", "v1", "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	p, err := layout.FromPath(out)
	require.NoError(t, err)
	ii, err := p.ImageIndex()
	require.NoError(t, err)
	im, err := ii.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 1)
	assert.Equal(t, "v1", im.Manifests[0].Annotations["org.opencontainers.image.ref.name"])
	assert.Contains(t, stdout, im.Manifests[0].Digest.String())

	archive := filepath.Join(t.TempDir(), "hello.tar")
	code, stdout2, stderr := run(t, baseEnv(), "build", "--platforms", "linux/s390x,linux/ppc64le", "--base", "scratch", "--output", "oci-archive:"+archive, "--tag", "v1", "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, archive)
	assert.Equal(t, strings.SplitN(stdout, "\n", 2)[0][len("oci:"+out):], strings.SplitN(stdout2, "\n", 2)[0][len("oci-archive:"+archive):], "same index digest in a layout and an archive")

	// The archive is a valid base for the next build.
	code, _, stderr = run(t, baseEnv(), "build", "--base", "oci-archive:"+archive+":v1", "--output", "oci:"+filepath.Join(t.TempDir(), "o2"), "./cmd/hello")
	require.Equal(t, 0, code, stderr)
}

func TestVersionCommand(t *testing.T) {
	code, stdout, _ := run(t, nil, "version")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "GO version:")
}

func TestUsageErrors(t *testing.T) {
	helloModule(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "--jobs", "0", "--base", "scratch", "./cmd/hello"}, "--jobs must be at least 1"},
		{[]string{"build", "--platforms", "arm64", "--base", "scratch", "./cmd/hello"}, `platform "arm64": want os/arch[/variant]`},
		{[]string{"build", "./cmd/hello"}, "scratch (the default base) offers none"},
		{[]string{"push", "--platforms", "linux/amd64", "--base", "scratch", "./cmd/hello"}, "push needs --tag"},
		{[]string{"build", "--output", "docker:x", "--base", "scratch", "./cmd/hello"}, `--output "docker:x"`},
		{[]string{"build"}, "no helperbuild.yaml"},
		{[]string{"build", "--nope"}, "unknown flag: --nope"},
	} {
		code, stdout, stderr := run(t, baseEnv(), tc.args...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, tc.want)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	}
}
