package join

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// gitlabWindows pushes, to an in-process registry whose requests log
// records, two Windows bases (foreign layers nothing serves, left out of
// the registry) and GitLab-style per-variant helper tags of v17.10.0:
// x86_64, arm64, x86_64-…-servercore1809 (no base annotation, as GitLab's
// own) and x86_64-…-servercore21H2 (its base annotated). edit21H2 changes
// the 21H2 helper's config. It returns the repository, the ltsc2022 base's
// reference, the log and the foreign layers' digests.
func gitlabWindows(t *testing.T, reads *testkit.ForeignReads, edit21H2 func(*v1.ConfigFile)) (repo, base2022 string, log *testkit.RequestLog, foreign []string) {
	t.Helper()
	log = &testkit.RequestLog{}
	host := testkit.Registry(t, log.Wrap)
	b2019, b2022 := testkit.WindowsBase(t, "10.0.17763.5830", reads), testkit.WindowsBase(t, "10.0.20348.2340", reads)
	push(t, host, "windows/servercore", "ltsc2019", b2019)
	base2022 = push(t, host, "windows/servercore", "ltsc2022", b2022)
	for _, b := range []v1.Image{b2019, b2022} {
		m, err := b.Manifest()
		require.NoError(t, err)
		for _, l := range m.Layers {
			if !l.MediaType.IsDistributable() {
				foreign = append(foreign, l.Digest.Hex)
			}
		}
	}
	repo = host + "/gitlab-org/gitlab-runner-helper"
	push(t, host, "gitlab-org/gitlab-runner-helper", "x86_64-v17.10.0", archImage(t, "amd64", "", "amd64"))
	push(t, host, "gitlab-org/gitlab-runner-helper", "arm64-v17.10.0", archImage(t, "arm64", "", "arm64"))
	push(t, host, "gitlab-org/gitlab-runner-helper", "x86_64-v17.10.0-servercore1809", testkit.WindowsHelper(t, os.Environ(), b2019, "", nil))
	push(t, host, "gitlab-org/gitlab-runner-helper", "x86_64-v17.10.0-servercore21H2", testkit.WindowsHelper(t, os.Environ(), b2022, base2022, edit21H2))
	require.Len(t, foreign, 2)
	log.Take()
	return repo, base2022, log, foreign
}

const mixed = "linux/amd64,linux/arm64,windows/amd64:10.0.20348,windows/amd64:10.0.17763"

// GitLab's per-variant tags, Linux and two Windows builds, join into one
// plan: Linux first, then Windows by build; each .exe checked as PE; the
// foreign layers never asked for.
func TestPlanJoinsGitLabWindowsTags(t *testing.T) {
	var reads testkit.ForeignReads
	repo, base2022, log, foreign := gitlabWindows(t, &reads, nil)
	o := opts(t, strings.Split(mixed, ",")...)
	sources, err := GitLabHelper(repo, "v17.10.0", o.Platforms, "", nil)
	require.NoError(t, err)
	assert.Equal(t, repo+":x86_64-v17.10.0-servercore21H2", sources[2])

	plan, err := New(context.Background(), sources, o)
	require.NoError(t, err)
	assert.Equal(t, []string{"linux/amd64", "linux/arm64", "windows/amd64:10.0.17763.5830", "windows/amd64:10.0.20348.2340"},
		platform.FormatAll(plan.Platforms()), "Linux first, Windows by build")
	for _, e := range plan.Entries[2:] {
		assert.False(t, e.Fixed)
		assert.Equal(t, e.SourceManifest, e.Descriptor.Digest, "copied as it is")
		require.Len(t, e.Evidence.Binaries, 1)
		assert.Equal(t, `C:\helper\hello.exe`, e.Evidence.Binaries[0].Path)
		assert.NoError(t, e.Evidence.Binaries[0].Mismatch)
		assert.Equal(t, "PE executable for amd64 (console)", e.Evidence.Binaries[0].Describe)
		assert.Equal(t, 1, e.Evidence.Foreign, "the base's foreign layer, not read")
	}
	assert.Empty(t, plan.Entries[2].Base)
	assert.Contains(t, plan.Entries[2].BaseUnseen, "names no base")
	assert.True(t, strings.HasPrefix(plan.Entries[3].Base, strings.Split(base2022, ":ltsc")[0]+"@sha256:"), plan.Entries[3].Base)

	// Without --platforms: the same order, whatever the sources' order.
	reversed := []string{sources[3], sources[2], sources[1], sources[0]}
	again, err := New(context.Background(), reversed, opts(t))
	require.NoError(t, err)
	assert.Equal(t, platform.FormatAll(plan.Platforms()), platform.FormatAll(again.Platforms()))
	// windows/amd64 without a build matches both: name each.
	_, err = New(context.Background(), sources[2:], opts(t, "windows/amd64"))
	assert.ErrorContains(t, err, "windows/amd64 matches 2 Windows builds")
	assert.ErrorContains(t, err, "--platforms windows/amd64:10.0.17763,windows/amd64:10.0.20348")

	assert.Zero(t, reads.Load())
	for _, r := range log.Take() {
		for _, f := range foreign {
			assert.NotContains(t, r, f, "a foreign blob was asked for")
		}
	}
}

// A Windows source labelled linux is refused naming both, and fixed with
// FixPlatform to its binaries' OS and its base's build.
func TestPlanRefusesAWindowsSourceLabelledLinux(t *testing.T) {
	var reads testkit.ForeignReads
	repo, _, _, _ := gitlabWindows(t, &reads, func(cf *v1.ConfigFile) { cf.OS = "linux" })
	src := repo + ":x86_64-v17.10.0-servercore21H2"
	_, err := New(context.Background(), []string{src}, opts(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "source "+src+": config says linux/amd64, binaries are windows/amd64:10.0.20348.2340 (C:\\helper\\hello.exe is PE executable for amd64 (console), not linux/amd64")

	o := opts(t)
	o.FixPlatform = true
	plan, err := New(context.Background(), []string{src}, o)
	require.NoError(t, err)
	e := plan.Entries[0]
	assert.True(t, e.Fixed)
	assert.Equal(t, "windows/amd64:10.0.20348.2340", platform.Format(e.Platform))
	cf, err := e.Image.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "windows", cf.OS)
	assert.Equal(t, "10.0.20348.2340", cf.OSVersion)
	assert.Zero(t, reads.Load())
}

// A Windows source whose os.version is another build than its base's is
// refused naming both; FixPlatform gives it the base's.
func TestPlanRefusesAnOSVersionItsBaseContradicts(t *testing.T) {
	var reads testkit.ForeignReads
	repo, base2022, _, _ := gitlabWindows(t, &reads, func(cf *v1.ConfigFile) { cf.OSVersion = "10.0.17763.5830" })
	src := repo + ":x86_64-v17.10.0-servercore21H2"
	_, err := New(context.Background(), []string{src}, opts(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "source "+src+": config says windows/amd64:10.0.17763.5830, its base "+strings.Split(base2022, ":ltsc")[0]+"@sha256:")
	assert.Contains(t, err.Error(), " is 10.0.20348.2340 (os.version of the base's config); --fix-platform")

	o := opts(t)
	o.FixPlatform = true
	plan, err := New(context.Background(), []string{src}, o)
	require.NoError(t, err)
	assert.True(t, plan.Entries[0].Fixed)
	assert.Equal(t, "windows/amd64:10.0.20348.2340", platform.Format(plan.Entries[0].Platform))
	assert.Zero(t, reads.Load())
}

// A Windows source that names no build anywhere cannot be picked by a
// node: refused, and --fix-platform cannot invent one.
func TestPlanRefusesAWindowsSourceWithoutABuild(t *testing.T) {
	var reads testkit.ForeignReads
	host := testkit.Registry(t)
	img := testkit.WindowsHelper(t, os.Environ(), testkit.WindowsBase(t, "10.0.20348.2340", &reads), "", func(cf *v1.ConfigFile) { cf.OSVersion = "" })
	src := push(t, host, "h", "win", img)
	o := opts(t)
	o.FixPlatform = true
	_, err := New(context.Background(), []string{src}, o)
	assert.ErrorContains(t, err, "config says windows/amd64 with no os.version and the image names no base")

	ps := strings.Split(mixed, ",")
	_, err = GitLabHelper("reg.example/h", "v1", []v1.Platform{testkit.Platform(t, ps[2]), testkit.Platform(t, "windows/amd64")}, "", nil)
	assert.ErrorContains(t, err, "windows/amd64 names no Windows build")
	got, err := GitLabHelper("reg.example/h", "v1", []v1.Platform{testkit.Platform(t, ps[3])}, WindowsNanoServer, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"reg.example/h:x86_64-v1-nanoserver1809"}, got)
	_, err = GitLabHelper("reg.example/h", "v1", nil, "core", nil)
	assert.ErrorContains(t, err, `--gitlab-windows-base "core": want servercore or nanoserver`)
	_, err = GitLabHelper("reg.example/h", "v1", []v1.Platform{testkit.Platform(t, "windows/amd64:10.0.26100")}, "", nil)
	assert.ErrorContains(t, err, "no Windows helper for build 10.0.26100")
}

// An oci: layout holding a Windows helper (its foreign layer left out, as
// helperbuild's layout destination writes it) is a source like a registry
// tag.
func TestPlanReadsAWindowsLayout(t *testing.T) {
	var reads testkit.ForeignReads
	img := testkit.WindowsHelper(t, os.Environ(), testkit.WindowsBase(t, "10.0.17763.5830", &reads), "", nil)
	dir := filepath.Join(t.TempDir(), "oci")
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	for _, l := range layers {
		if mt, err := l.MediaType(); err == nil && !mt.IsDistributable() {
			continue
		}
		d, err := l.Digest()
		require.NoError(t, err)
		rc, err := l.Compressed()
		require.NoError(t, err)
		require.NoError(t, p.WriteBlob(d, rc))
	}
	for _, raw := range []func() ([]byte, error){img.RawConfigFile, img.RawManifest} {
		b, err := raw()
		require.NoError(t, err)
		h, _, err := v1.SHA256(bytes.NewReader(b))
		require.NoError(t, err)
		require.NoError(t, p.WriteBlob(h, io.NopCloser(bytes.NewReader(b))))
	}
	d, err := partial.Descriptor(img)
	require.NoError(t, err)
	d.Annotations = map[string]string{specsv1.AnnotationRefName: "servercore1809"}
	require.NoError(t, p.AppendDescriptor(*d))

	plan, err := New(context.Background(), []string{"oci:" + dir + ":servercore1809"}, opts(t, "windows/amd64:10.0.17763"))
	require.NoError(t, err)
	require.Len(t, plan.Entries, 1)
	assert.Equal(t, "windows/amd64:10.0.17763.5830", platform.Format(plan.Entries[0].Platform))
	assert.Equal(t, 1, plan.Entries[0].Evidence.Foreign)
	assert.Zero(t, reads.Load())
}
