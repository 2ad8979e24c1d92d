package join

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
)

func opts(t *testing.T, ps ...string) Options {
	t.Helper()
	o := Options{TempDir: t.TempDir(), Images: imageref.Options{Insecure: []string{"127.0.0.1"}, Blobs: imageref.NewBlobs(t.TempDir())}}
	for _, s := range ps {
		p, err := platform.Parse(s)
		require.NoError(t, err)
		o.Platforms = append(o.Platforms, p)
	}
	return o
}

func TestPlanOrdersAndProves(t *testing.T) {
	host := testkit.Registry(t)
	arm := push(t, host, "src/helper", "arm-v1", archImage(t, "arm", "v7", "arm"))
	amd := push(t, host, "src/helper", "x86_64-v1", archImage(t, "amd64", "", "amd64"))
	arm64 := push(t, host, "src/helper", "arm64-v1", archImage(t, "arm64", "", "arm64"))

	plan, err := New(context.Background(), []string{arm, amd, arm64}, opts(t))
	require.NoError(t, err)
	assert.Equal(t, []string{"linux/amd64", "linux/arm64", "linux/arm/v7"}, platform.FormatAll(plan.Platforms()), "the fixed order, not the sources'")
	for _, e := range plan.Entries {
		assert.False(t, e.Fixed)
		require.Len(t, e.Evidence.Binaries, 1, "the one executable ELF file; /etc/motd is no executable")
		assert.Equal(t, "/bin/hello", e.Evidence.Binaries[0].Path)
		assert.Equal(t, e.SourceManifest, e.Descriptor.Digest, "copied as it is")
		assert.True(t, platform.Equal(e.Platform, *e.Descriptor.Platform))
	}
	// --platforms orders them, and the same sources give the same entries.
	again, err := New(context.Background(), []string{amd, arm64, arm}, opts(t, "linux/arm/v7", "linux/amd64", "linux/arm64"))
	require.NoError(t, err)
	assert.Equal(t, []string{"linux/arm/v7", "linux/amd64", "linux/arm64"}, platform.FormatAll(again.Platforms()))
	assert.Equal(t, plan.Entries[0].Descriptor, again.Entries[1].Descriptor)
}

func TestPlanRefusesALyingConfigAndFixesIt(t *testing.T) {
	host := testkit.Registry(t)
	amd := push(t, host, "src/helper", "x86_64-v1", archImage(t, "amd64", "", "amd64"))
	liar := push(t, host, "src/helper", "arm64-v1", archImage(t, "amd64", "", "arm64"))

	_, err := New(context.Background(), []string{amd, liar}, opts(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "source "+liar+": config says linux/amd64, binaries are linux/arm64 (/bin/hello is")
	assert.Contains(t, err.Error(), "--fix-platform")

	o := opts(t)
	o.FixPlatform = true
	plan, err := New(context.Background(), []string{amd, liar}, o)
	require.NoError(t, err)
	require.Len(t, plan.Entries, 2)
	fixed := plan.Entries[1]
	assert.True(t, fixed.Fixed)
	assert.Equal(t, "linux/arm64", platform.Format(fixed.Platform))
	assert.Equal(t, "linux/amd64", platform.Format(fixed.ConfigSaid))
	assert.NotEqual(t, fixed.SourceManifest, fixed.Descriptor.Digest, "a new manifest")
	assert.False(t, plan.Entries[0].Fixed)

	// The new config says arm64 and keeps every other field; the manifest
	// keeps the source's layers.
	cf, err := fixed.Image.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "arm64", cf.Architecture)
	assert.Equal(t, []string{"PATH=/bin", "ARCH_NOTE=arm64"}, cf.Config.Env)
	r, err := name.ParseReference(liar)
	require.NoError(t, err)
	src, err := remote.Image(r)
	require.NoError(t, err)
	srcM, err := src.Manifest()
	require.NoError(t, err)
	m, err := fixed.Image.Manifest()
	require.NoError(t, err)
	assert.Equal(t, srcM.Layers, m.Layers)
	assert.NotEqual(t, srcM.Config.Digest, m.Config.Digest)
	cn, err := fixed.Image.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, m.Config.Digest, cn, "the config blob is the one the manifest names")

	// Fixed again from the same source: the same bytes.
	again, err := New(context.Background(), []string{amd, liar}, o)
	require.NoError(t, err)
	assert.Equal(t, fixed.Descriptor, again.Entries[1].Descriptor)
}

func TestPlanRefusals(t *testing.T) {
	host := testkit.Registry(t)
	amd := push(t, host, "src/helper", "x86_64-v1", archImage(t, "amd64", "", "amd64"))
	amd2 := push(t, host, "other/helper", "x86_64", archImage(t, "amd64", "", "amd64"))
	arm64 := push(t, host, "src/helper", "arm64-v1", archImage(t, "arm64", "", "arm64"))
	noELF, err := mutate.AppendLayers(empty.Image, tarLayer(t, map[string][]byte{"etc/motd": []byte("x")}))
	require.NoError(t, err)
	noELF, err = mutate.ConfigFile(noELF, &v1.ConfigFile{OS: "linux", Architecture: "amd64"})
	require.NoError(t, err)
	scripts := push(t, host, "src/scripts", "v1", noELF)
	mixed, err := mutate.AppendLayers(archImage(t, "amd64", "", "amd64"), tarLayer(t, map[string][]byte{"usr/bin/tool": testkit.HelloBinary(t, os.Environ(), "arm64")}))
	require.NoError(t, err)
	mixedRef := push(t, host, "src/mixed", "v1", mixed)

	fix := opts(t)
	fix.FixPlatform = true
	tests := []struct {
		name    string
		sources []string
		opts    Options
		want    string
	}{
		{"duplicate platform", []string{amd, arm64, amd2}, opts(t), "linux/amd64 comes from 2 sources: " + amd},
		{"missing platform", []string{amd, arm64}, opts(t, "linux/amd64", "linux/arm64", "linux/s390x"), "no source offers linux/s390x"},
		{"a source not asked for", []string{amd, arm64}, opts(t, "linux/amd64"), "source " + arm64 + " is linux/arm64, which is not among --platforms linux/amd64"},
		{"unreachable source", []string{amd, "127.0.0.1:1/nothing/here:v1"}, opts(t), "source 127.0.0.1:1/nothing/here:v1"},
		{"no such tag", []string{amd, host + "/src/helper:nope"}, opts(t), "source " + host + "/src/helper:nope"},
		{"no binaries", []string{scripts}, opts(t), "source " + scripts + ": config says linux/amd64, binaries do not say one platform: no executable ELF file"},
		{"binaries of two platforms, even with --fix-platform", []string{mixedRef}, fix, "binaries of several platforms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), tt.sources, tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

// attestationFor is a BuildKit-style attestation manifest about subject.
func attestationFor(t *testing.T, subject v1.Descriptor) v1.Image {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(`{"_type":"https://in-toto.io/Statement/v1"}`), attestspec.MediaTypeInToto), MediaType: attestspec.MediaTypeInToto})
	require.NoError(t, err)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "unknown", Architecture: "unknown"})
	require.NoError(t, err)
	return mutate.Subject(img, subject).(v1.Image)
}

func TestPlanExpandsIndexesWithTheirAttestations(t *testing.T) {
	host := testkit.Registry(t)
	var idx v1.ImageIndex = empty.Index
	idx = mutate.IndexMediaType(idx, types.OCIImageIndex)
	var subjects []v1.Descriptor
	for _, a := range []struct{ arch, variant, bin string }{{"amd64", "", "amd64"}, {"arm64", "", "arm64"}, {"arm", "v7", "arm"}} {
		img := archImage(t, a.arch, a.variant, a.bin)
		d, err := img.Digest()
		require.NoError(t, err)
		n, err := img.Size()
		require.NoError(t, err)
		mt, err := img.MediaType()
		require.NoError(t, err)
		desc := v1.Descriptor{MediaType: mt, Digest: d, Size: n, Platform: &v1.Platform{OS: "linux", Architecture: a.arch, Variant: a.variant}}
		subjects = append(subjects, desc)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: desc})
	}
	for _, s := range subjects {
		att := attestationFor(t, s)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{attestspec.AnnotationReferenceType: attestspec.ReferenceTypeAttestation,
				attestspec.AnnotationReferenceDigest: s.Digest.String()}}})
	}
	r, err := name.ParseReference(host + "/upstream/helper:v1")
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(r, idx))

	plan, err := New(context.Background(), []string{r.String()}, opts(t, "linux/arm64", "linux/amd64"))
	require.NoError(t, err)
	require.Len(t, plan.Entries, 2, "arm/v7 not asked for")
	assert.Equal(t, []string{"linux/arm64", "linux/amd64"}, platform.FormatAll(plan.Platforms()))
	for i, e := range plan.Entries {
		require.Len(t, e.Attestations, 1, "entry %d keeps the attestation about it", i)
		assert.Equal(t, e.Descriptor.Digest.String(), e.Attestations[0].Descriptor.Annotations[attestspec.AnnotationReferenceDigest])
	}

	// An attestation manifest named as a source is refused.
	att := attestationFor(t, subjects[0])
	attRef := push(t, host, "upstream/helper", "att", att)
	_, err = New(context.Background(), []string{attRef}, opts(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "source "+attRef+" is an attestation manifest (about "+subjects[0].Digest.String())

	// A fixed image leaves its attestations behind and counts them.
	liarIdx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{
		Add: archImage(t, "amd64", "", "arm64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
	ld, err := liarIdx.IndexManifest()
	require.NoError(t, err)
	liarIdx = mutate.AppendManifests(liarIdx, mutate.IndexAddendum{Add: attestationFor(t, ld.Manifests[0]), Descriptor: v1.Descriptor{
		Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
		Annotations: map[string]string{attestspec.AnnotationReferenceType: attestspec.ReferenceTypeAttestation,
			attestspec.AnnotationReferenceDigest: ld.Manifests[0].Digest.String()}}})
	lr, err := name.ParseReference(host + "/upstream/liar:v1")
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(lr, liarIdx))
	o := opts(t)
	o.FixPlatform = true
	plan, err = New(context.Background(), []string{lr.String()}, o)
	require.NoError(t, err)
	require.Len(t, plan.Entries, 1)
	assert.True(t, plan.Entries[0].Fixed)
	assert.Empty(t, plan.Entries[0].Attestations)
	assert.Equal(t, 1, plan.Entries[0].Dropped)
	raw, err := plan.Entries[0].Image.RawConfigFile()
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(raw, &cfg))
	assert.Equal(t, "arm64", cfg["architecture"])
}

func TestGitLabHelper(t *testing.T) {
	got, err := GitLabHelper("registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper", "17.10.0", nil, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v17.10.0",
		"registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:arm64-v17.10.0",
		"registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:arm-v17.10.0",
		"registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:ppc64le-v17.10.0",
		"registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:s390x-v17.10.0",
	}, got)
	ps, err := platform.ParseList("linux/riscv64,linux/loong64")
	require.NoError(t, err)
	got, err = GitLabHelper("reg.example/h", "v18.0.0", ps, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"reg.example/h:riscv64-v18.0.0", "reg.example/h:loong64-v18.0.0"}, got)
	got, err = GitLabHelper("reg.example/h", "4b6f1bfa", ps[:1], "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"reg.example/h:riscv64-4b6f1bfa"}, got)

	_, err = GitLabHelper("reg.example/h", "", nil, "", nil)
	assert.ErrorContains(t, err, "needs --version")
	_, err = GitLabHelper("reg.example/h", "v1", []v1.Platform{{OS: "linux", Architecture: "mips64le"}}, "", nil)
	assert.ErrorContains(t, err, "GitLab publishes no helper for linux/mips64le")
	_, err = GitLabHelper("Reg Example", "v1", nil, "", nil)
	assert.ErrorContains(t, err, "--gitlab-helper")
}

func TestPlanReadsLayoutsAndArchives(t *testing.T) {
	dir := t.TempDir()
	amd := archImage(t, "amd64", "", "amd64")
	p, err := layout.Write(filepath.Join(dir, "oci"), empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendImage(amd, layout.WithAnnotations(map[string]string{specsv1.AnnotationRefName: "x86_64"})))
	host := testkit.Registry(t)
	arm64 := push(t, host, "src/helper", "arm64-v1", archImage(t, "arm64", "", "arm64"))

	plan, err := New(context.Background(), []string{"oci:" + filepath.Join(dir, "oci") + ":x86_64", arm64}, opts(t))
	require.NoError(t, err)
	require.Len(t, plan.Entries, 2)
	d, err := amd.Digest()
	require.NoError(t, err)
	assert.Equal(t, d, plan.Entries[0].Descriptor.Digest, "the layout's image as it is")
	assert.Equal(t, "linux/amd64", platform.Format(plan.Entries[0].Platform))
}
