package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// gitlabHelperTags pushes per-arch helper images in GitLab's naming to
// host/REPO:<arch>-v17.10.0; arm64's config says amd64 when liar.
func gitlabHelperTags(t *testing.T, host, repo string, liar bool) {
	t.Helper()
	for _, a := range []struct{ tag, goarch, variant string }{{"x86_64", "amd64", ""}, {"arm64", "arm64", ""}, {"arm", "arm", "v7"}} {
		cfg := v1.Platform{OS: "linux", Architecture: a.goarch, Variant: a.variant}
		if liar && a.goarch == "arm64" {
			cfg = v1.Platform{OS: "linux", Architecture: "amd64"}
		}
		r, err := name.ParseReference(host + "/" + repo + ":" + a.tag + "-v17.10.0")
		require.NoError(t, err)
		require.NoError(t, remote.Write(r, testkit.ArchImage(t, os.Environ(), cfg, a.goarch)))
	}
}

func tagsOf(t *testing.T, repo string) []string {
	t.Helper()
	r, err := name.NewRepository(repo)
	require.NoError(t, err)
	tags, err := remote.List(r)
	if err != nil {
		return nil // no such repository: nothing written
	}
	return tags
}

func TestIndexCommand(t *testing.T) {
	src := testkit.Registry(t)
	log := &testkit.RequestLog{}
	dst := testkit.Registry(t, log.Wrap)
	gitlabHelperTags(t, src, "gitlab-org/helper", false)
	gitlabHelperTags(t, src, "liar/helper", true)
	env := baseEnv()
	ps := "linux/amd64,linux/arm64,linux/arm/v7"
	target := dst + "/mirror/gitlab-runner-helper"

	// Refusals: one line naming the source, exit 1 (3 for a source the
	// registry does not have), nothing tagged.
	refusals := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"lying config", []string{"--gitlab-helper", src + "/liar/helper", "--version", "v17.10.0", "--platforms", ps},
			"source " + src + "/liar/helper:arm64-v17.10.0: config says linux/amd64, binaries are linux/arm64", 1},
		{"duplicate platform", []string{"--gitlab-helper", src + "/gitlab-org/helper", "--version", "17.10.0", "--platforms", ps, src + "/liar/helper:x86_64-v17.10.0"},
			"linux/amd64 comes from 2 sources", 1},
		{"missing platform", []string{"--gitlab-helper", src + "/gitlab-org/helper", "--version", "v17.10.0", "--platforms", ps + ",linux/s390x"},
			"source " + src + "/gitlab-org/helper:s390x-v17.10.0", 3},
		{"unreachable source", []string{"127.0.0.1:1/nothing:v1"}, "source 127.0.0.1:1/nothing:v1", 1},
		{"windows platform without its tag", []string{"--gitlab-helper", src + "/gitlab-org/helper", "--version", "v17.10.0", "--platforms", ps + ",windows/amd64:10.0.20348"},
			"source " + src + "/gitlab-org/helper:x86_64-v17.10.0-servercore21H2", 3},
		{"windows platform without a build", []string{"--gitlab-helper", src + "/gitlab-org/helper", "--version", "v17.10.0", "--platforms", ps + ",windows/amd64"},
			"--gitlab-helper: windows/amd64 names no Windows build", 2},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, env, append([]string{"index", "--tag", target + ":v17.10.0", "--retries", "0"}, tt.args...)...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, tt.want)
			assert.Equal(t, 1, strings.Count(stderr, "helperbuild: "), stderr)
			assert.Empty(t, stdout)
			assert.Empty(t, tagsOf(t, target))
		})
	}
	for _, l := range log.Take() {
		assert.NotContains(t, l, "PUT", "a refused run writes nothing: %s", l)
	}

	// --dry-run checks and prints, writing nothing.
	code, stdout, stderr := run(t, env, "index", "--dry-run", "--tag", target+":v17.10.0", "--gitlab-helper", src+"/gitlab-org/helper", "--version", "v17.10.0", "--platforms", ps)
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "dry run: nothing was written; this is what would be\n"+target+"@sha256:"), stdout)
	assert.Contains(t, stdout, `"mediaType":"application/vnd.oci.image.index.v1+json"`)
	assert.Empty(t, tagsOf(t, target))

	// The run: the summary, the dotenv, the metadata.
	out := t.TempDir()
	args := []string{"index", "--tag", target + ":v17.10.0", "--tag", target + ":latest", "--gitlab-helper", src + "/gitlab-org/helper", "--version", "v17.10.0",
		"--platforms", ps, "--dotenv", filepath.Join(out, "index.env"), "--metadata-file", filepath.Join(out, "meta.json")}
	code, stdout, stderr = run(t, env, args...)
	require.Equal(t, 0, code, stderr)
	first := strings.SplitN(stdout, "\n", 2)[0]
	assert.Regexp(t, `^`+target+`@sha256:[0-9a-f]{64}$`, first)
	assert.Contains(t, stdout, "tags: "+target+":v17.10.0 "+target+":latest")
	assert.Contains(t, stdout, `helper_image = "`+first+`"`)
	assert.Contains(t, stdout, "linux/arm64   "+src+"/gitlab-org/helper:arm64-v17.10.0 (sha256:", "aligned with linux/arm/v7")
	env1, err := os.ReadFile(filepath.Join(out, "index.env"))
	require.NoError(t, err)
	assert.Contains(t, string(env1), "GITLAB_RUNNER_HELPER_IMAGE="+first)
	assert.ElementsMatch(t, []string{"v17.10.0", "latest"}, tagsOf(t, target))
	meta, err := os.ReadFile(filepath.Join(out, "meta.json"))
	require.NoError(t, err)
	assert.Contains(t, string(meta), strings.TrimPrefix(first, target+"@"))
	assert.Contains(t, string(meta), `"linux/arm/v7"`)
	code, stdout, stderr = run(t, env, "verify", "--nodes", "../../docs/testdata/nodes.json", target+":v17.10.0")
	assert.Equal(t, 0, code, stdout+stderr)
	log.Take()

	// Again: the same digest, no blob written.
	code, again, stderr := run(t, env, args...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, first, strings.SplitN(again, "\n", 2)[0])
	for _, l := range log.Take() {
		assert.False(t, strings.HasPrefix(l, "PUT") && strings.Contains(l, "/blobs/"), "a re-run uploads no blob: %s", l)
	}

	// --fix-platform publishes the liar with a corrected config, and says so.
	code, stdout, stderr = run(t, env, "index", "--fix-platform", "--tag", dst+"/fixed/helper:v1", "--gitlab-helper", src+"/liar/helper", "--version", "v17.10.0", "--platforms", ps)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "FIXED: its config said linux/amd64, its ELF executables (1) are linux/arm64")
	code, stdout, stderr = run(t, env, "verify", "--platforms", ps, dst+"/fixed/helper:v1")
	assert.Equal(t, 0, code, stdout+stderr)
}
