package main

import (
	"os"
	"strings"
	"testing"

	"github.com/containerd/platforms"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// gitlabWindowsTags pushes GitLab-style per-variant helper tags of
// v17.10.0 to host/repo: x86_64, arm64, x86_64-…-servercore1809 and
// x86_64-…-servercore21H2, each Windows helper on its own base (pushed to
// host/windows/servercore without its foreign layer, its digest named in
// the helper's base annotations); edit changes the 21H2 helper's config.
// It returns the foreign layers' digests.
func gitlabWindowsTags(t *testing.T, host, repo string, reads *testkit.ForeignReads, edit func(*v1.ConfigFile)) []string {
	t.Helper()
	write := func(ref string, img v1.Image) {
		r, err := name.ParseReference(ref)
		require.NoError(t, err)
		require.NoError(t, remote.Write(r, img))
	}
	write(host+"/"+repo+":x86_64-v17.10.0", testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "amd64"}, "amd64"))
	write(host+"/"+repo+":arm64-v17.10.0", testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "arm64"}, "arm64"))
	var foreign []string
	for _, w := range []struct{ version, ltsc, rel string }{{"10.0.17763.5830", "ltsc2019", "1809"}, {"10.0.20348.2340", "ltsc2022", "21H2"}} {
		base := testkit.WindowsBase(t, w.version, reads)
		baseRef := host + "/windows/servercore:" + w.ltsc
		write(baseRef, base)
		var e func(*v1.ConfigFile)
		if w.rel == "21H2" {
			e = edit
		}
		write(host+"/"+repo+":x86_64-v17.10.0-servercore"+w.rel, testkit.WindowsHelper(t, os.Environ(), base, baseRef, e))
		m, err := base.Manifest()
		require.NoError(t, err)
		for _, l := range m.Layers {
			if !l.MediaType.IsDistributable() {
				foreign = append(foreign, l.Digest.Hex)
			}
		}
	}
	return foreign
}

// index joins GitLab's Linux and per-release Windows helper tags into one
// tag: Linux first, then Windows by build; each node kind's selector picks
// its own entry; no foreign blob is asked for anywhere; a second run gives
// the same digest; a Windows source labelled linux, or with another build
// than its base's, is refused naming both (exit 1).
func TestIndexJoinsGitLabWindowsTags(t *testing.T) {
	srcLog, dstLog := &testkit.RequestLog{}, &testkit.RequestLog{}
	src, dst := testkit.Registry(t, srcLog.Wrap), testkit.Registry(t, dstLog.Wrap)
	var reads testkit.ForeignReads
	foreign := gitlabWindowsTags(t, src, "gitlab-org/helper", &reads, nil)
	foreign = append(foreign, gitlabWindowsTags(t, src, "liar/helper", &reads, func(cf *v1.ConfigFile) { cf.OS = "linux" })...)
	foreign = append(foreign, gitlabWindowsTags(t, src, "oldbuild/helper", &reads, func(cf *v1.ConfigFile) { cf.OSVersion = "10.0.17763.5830" })...)
	srcLog.Take()
	env := baseEnv()
	ps := "linux/amd64,linux/arm64,windows/amd64:10.0.20348,windows/amd64:10.0.17763"
	target := dst + "/mirror/gitlab-runner-helper"

	for _, tt := range []struct{ repo, want string }{
		{"liar/helper", "config says linux/amd64, binaries are windows/amd64:10.0.20348.2340 (C:\\helper\\hello.exe is PE executable for amd64 (console), not linux/amd64"},
		{"oldbuild/helper", "config says windows/amd64:10.0.17763.5830, its base " + src + "/windows/servercore@sha256:"},
	} {
		code, stdout, stderr := run(t, env, "index", "--tag", target+":bad", "--retries", "0", "--gitlab-helper", src+"/"+tt.repo, "--version", "v17.10.0", "--platforms", ps)
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, "source "+src+"/"+tt.repo+":x86_64-v17.10.0-servercore21H2: "+tt.want)
		assert.Empty(t, stdout)
	}
	assert.Empty(t, tagsOf(t, target))

	args := []string{"index", "--tag", target + ":v17.10.0", "--gitlab-helper", src + "/gitlab-org/helper", "--version", "v17.10.0", "--platforms", ps}
	code, stdout, stderr := run(t, env, args...)
	require.Equal(t, 0, code, stderr)
	first := strings.SplitN(stdout, "\n", 2)[0]
	assert.Contains(t, stdout, "windows/amd64:10.0.17763.5830  "+src+"/gitlab-org/helper:x86_64-v17.10.0-servercore1809 (sha256:")
	assert.Contains(t, stdout, "os.version: its base "+src+"/windows/servercore@sha256:")
	code, again, stderr := run(t, env, args...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, first, strings.SplitN(again, "\n", 2)[0], "a second run gives the same index")
	assert.Zero(t, reads.Load())
	for _, l := range append(srcLog.Take(), dstLog.Take()...) {
		for _, f := range foreign {
			assert.NotContains(t, l, f, "a foreign blob was asked for or written")
		}
	}

	ref, err := name.ParseReference(target + ":v17.10.0")
	require.NoError(t, err)
	idx, err := remote.Index(ref)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	var listed []string
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.OS != "unknown" {
			listed = append(listed, d.Platform.String())
		}
	}
	assert.Equal(t, []string{"linux/amd64", "linux/arm64", "windows/amd64:10.0.17763.5830", "windows/amd64:10.0.20348.2340"}, listed)
	for _, n := range []struct {
		node specs.Platform
		want string
	}{
		{specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.6054"}, "windows/amd64:10.0.17763.5830"},
		{specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.2582"}, "windows/amd64:10.0.20348.2340"},
		{specs.Platform{OS: "linux", Architecture: "arm64"}, "linux/arm64"},
	} {
		m := platforms.NewMatcher(n.node)
		var picked []v1.Descriptor
		for _, d := range im.Manifests {
			if d.Platform != nil && m.Match(specs.Platform{OS: d.Platform.OS, Architecture: d.Platform.Architecture, Variant: d.Platform.Variant, OSVersion: d.Platform.OSVersion}) {
				picked = append(picked, d)
			}
		}
		require.Len(t, picked, 1, "containerd for %v", n.node)
		assert.Equal(t, n.want, picked[0].Platform.String(), "containerd for %v", n.node)
		// go-containerregistry matches os.version exactly: ask with the entry's
		// revision, as a node of that revision would.
		want := v1.Platform{OS: n.node.OS, Architecture: n.node.Architecture}
		if n.node.OS == "windows" {
			want.OSVersion = picked[0].Platform.OSVersion
		}
		img, err := remote.Image(ref, remote.WithPlatform(want))
		require.NoError(t, err, "go-containerregistry for %v", want)
		d, err := img.Digest()
		require.NoError(t, err)
		assert.Equal(t, picked[0].Digest, d, "go-containerregistry and containerd pick one entry")
	}

	code, stdout, stderr = run(t, env, "verify", "--platforms", ps, target+":v17.10.0")
	assert.Equal(t, 0, code, stdout+stderr)
}

// Fan-out of a mixed release: a push --by-digest job for linux/amd64 and
// one for windows/amd64:10.0.20348 (the Windows job listed first), merged,
// give the index digest of one push of both; no job or merge asks for the
// base's foreign blob.
func TestMergeFanOutWindows(t *testing.T) {
	log := &testkit.RequestLog{}
	host := testkit.Registry(t, log.Wrap)
	var reads testkit.ForeignReads
	base := testkit.WindowsIndex(t, &reads, []string{"10.0.20348.2340"}, v1.Platform{OS: "linux", Architecture: "amd64"})
	r, err := name.ParseReference(host + "/base/mixed:1")
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(r, base))
	m, err := base.IndexManifest()
	require.NoError(t, err)
	win, err := base.Image(m.Manifests[1].Digest)
	require.NoError(t, err)
	wm, err := win.Manifest()
	require.NoError(t, err)
	foreign := wm.Layers[0].Digest.Hex
	require.False(t, wm.Layers[0].MediaType.IsDistributable())

	helloModule(t)
	env := baseEnv("CI_COMMIT_TAG=v2.0.0", "CI_COMMIT_SHA=0123abc0000000000000000000000000000000ab")
	list := "linux/amd64,windows/amd64:10.0.20348"
	args := func(repo string) []string {
		return []string{"--base", host + "/base/mixed:1", "--tag", host + "/" + repo + "/hello:v2.0.0"}
	}
	code, _, stderr := run(t, env, append(append([]string{"push", "--platforms", list}, args("single")...), "./cmd/hello")...)
	require.Equal(t, 0, code, stderr)
	want, _ := indexDigest(t, host+"/single/hello:v2.0.0")

	parts := fanOut(t, env, []string{"windows/amd64:10.0.20348", "linux/amd64"}, append(append(args("fan"), "--release-platforms", list), "./cmd/hello")...)
	code, _, stderr = run(t, env, "merge", parts)
	require.Equal(t, 0, code, stderr)
	got, _ := indexDigest(t, host+"/fan/hello:v2.0.0")
	assert.Equal(t, want, got, "fan-out + merge gives the single push's index digest")
	assert.Zero(t, reads.Load())
	for _, l := range log.Take() {
		assert.NotContains(t, l, foreign, "the foreign blob was asked for")
	}
}
