package imageref

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in        string
		transport Transport
		path, tag string
		str       string
		wantErr   string
	}{
		{in: "scratch", transport: Scratch, str: "scratch"},
		{in: "oci:out/oci", transport: Layout, path: "out/oci", str: "oci:out/oci"},
		{in: "oci:out/oci:helper:v1", transport: Layout, path: "out/oci", tag: "helper:v1"},
		{in: "oci-archive:img.tar:v1", transport: Archive, path: "img.tar", tag: "v1"},
		{in: "oci:out/oci:helper:v1@sha256:" + strings.Repeat("ab", 32), transport: Layout, path: "out/oci", tag: "helper:v1", str: "oci:out/oci:helper:v1@sha256:" + strings.Repeat("ab", 32)},
		{in: "oci:out/oci@sha256:" + strings.Repeat("ab", 32), transport: Layout, path: "out/oci"},
		{in: "oci:out/oci:helper:v1@sha256:abc", wantErr: "want @sha256: and 64 hex digits"},
		{in: "registry.example.com/g/helper:v1", transport: Registry, str: "registry.example.com/g/helper:v1"},
		{in: "docker://localhost:5000/g/h:v1", transport: Registry, str: "localhost:5000/g/h:v1"},
		{in: "alpine", transport: Registry, str: "alpine"},
		{in: "", wantErr: "empty image reference"},
		{in: "oci:", wantErr: "oci: needs a directory"},
		{in: "oci-archive:", wantErr: "oci-archive: needs a file"},
		{in: "registry.example.com/G/Helper:v1", wantErr: `image reference "registry.example.com/G/Helper:v1"`},
		{in: "reg.example.com/g/h:bad tag", wantErr: "image reference"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := Parse(tt.in, nil)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.transport, r.Transport)
			assert.Equal(t, tt.path, r.Path)
			assert.Equal(t, tt.tag, r.Tag)
			if tt.str != "" {
				assert.Equal(t, tt.str, r.String())
			}
		})
	}
}

func multiArch(t *testing.T) v1.ImageIndex {
	return testkit.Index(t, 64, 1, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"},
		v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}, v1.Platform{OS: "unknown", Architecture: "unknown"})
}

func TestReadLayoutAndSelect(t *testing.T) {
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendIndex(multiArch(t), layout.WithAnnotations(map[string]string{specsv1.AnnotationRefName: "base:1"})))
	require.NoError(t, p.AppendImage(testkit.Image(t, v1.Platform{OS: "linux", Architecture: "s390x"}, 64, 1), layout.WithAnnotations(map[string]string{specsv1.AnnotationRefName: "single"})))
	ctx := context.Background()

	_, err = Read(ctx, mustParse(t, "oci:"+dir), Options{})
	assert.ErrorContains(t, err, "holds 2 entries")
	_, err = Read(ctx, mustParse(t, "oci:"+dir+":nope"), Options{})
	assert.ErrorContains(t, err, `no entry named "nope"`)

	a, err := Read(ctx, mustParse(t, "oci:"+dir+":base:1"), Options{})
	require.NoError(t, err)
	require.NotNil(t, a.Index)
	ps, err := a.Platforms()
	require.NoError(t, err)
	assert.Len(t, ps, 3, "attestation entries are skipped")
	_, _, err = a.ImageFor(v1.Platform{OS: "linux", Architecture: "arm64"})
	require.NoError(t, err, "arm64 matches arm64/v8")
	_, _, err = a.ImageFor(v1.Platform{OS: "linux", Architecture: "s390x"})
	assert.ErrorContains(t, err, "has no linux/s390x (it offers: linux/amd64,linux/arm64,linux/arm/v7)")
	_, _, err = a.ImageFor(v1.Platform{OS: "linux", Architecture: "arm", Variant: "v6"})
	assert.ErrorContains(t, err, "has no linux/arm/v6")

	// A digest pins an entry, or selects it.
	pinned, err := Read(ctx, mustParse(t, "oci:"+dir+":base:1@"+a.Digest.String()), Options{})
	require.NoError(t, err)
	assert.Equal(t, a.Digest, pinned.Digest)
	byDigest, err := Read(ctx, mustParse(t, "oci:"+dir+"@"+a.Digest.String()), Options{})
	require.NoError(t, err)
	assert.NotNil(t, byDigest.Index)
	other := "sha256:" + strings.Repeat("0", 64)
	_, err = Read(ctx, mustParse(t, "oci:"+dir+":base:1@"+other), Options{})
	assert.ErrorContains(t, err, `entry "base:1" is `+a.Digest.String()+", not the pinned digest")
	_, err = Read(ctx, mustParse(t, "oci:"+dir+"@"+other), Options{})
	assert.ErrorContains(t, err, "no entry with digest "+other)

	single, err := Read(ctx, mustParse(t, "oci:"+dir+":single"), Options{})
	require.NoError(t, err)
	require.NotNil(t, single.Image)
	_, _, err = single.ImageFor(v1.Platform{OS: "linux", Architecture: "s390x"})
	require.NoError(t, err)
	_, _, err = single.ImageFor(v1.Platform{OS: "linux", Architecture: "amd64"})
	assert.ErrorContains(t, err, "offers: linux/s390x")
}

func TestImageForConfigMismatch(t *testing.T) {
	// The index says arm64 but the config is amd64.
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{
		Add:        testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 64, 1),
		Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}},
	})
	a := &Artifact{Ref: Ref{Transport: Layout, raw: "oci:x"}, Index: idx}
	_, _, err := a.ImageFor(v1.Platform{OS: "linux", Architecture: "arm64"})
	assert.ErrorContains(t, err, "the manifest listed for linux/arm64 has a config for linux/amd64")
}

func TestPlatformsSkipAnnotatedAttestations(t *testing.T) {
	// An attestation manifest is known by its annotation, whatever platform
	// its entry names (attestspec.IsAttestation).
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	img := testkit.Image(t, amd64, 64, 1)
	d, err := img.Digest()
	require.NoError(t, err)
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: testkit.Image(t, amd64, 16, 1), Descriptor: v1.Descriptor{Platform: &amd64, Annotations: map[string]string{
			attestspec.AnnotationReferenceType: attestspec.ReferenceTypeAttestation, attestspec.AnnotationReferenceDigest: d.String()}}})
	a := &Artifact{Ref: Ref{Transport: Layout, raw: "oci:x"}, Index: idx}
	ps, err := a.Platforms()
	require.NoError(t, err)
	assert.Equal(t, []v1.Platform{amd64}, ps)
}

func TestReadArchive(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendIndex(multiArch(t)))
	file := filepath.Join(t.TempDir(), "base.tar")
	writeTar(t, file, dir, nil)
	a, err := Read(ctx, mustParse(t, "oci-archive:"+file), Options{TempDir: t.TempDir()})
	require.NoError(t, err)
	require.NotNil(t, a.Index)

	// A corrupt or hostile archive is refused.
	bad := filepath.Join(t.TempDir(), "bad.tar")
	writeTar(t, bad, dir, &tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644})
	_, err = Read(ctx, mustParse(t, "oci-archive:"+bad), Options{TempDir: t.TempDir()})
	assert.ErrorContains(t, err, "leaves the archive")
	junk := filepath.Join(t.TempDir(), "junk.tar")
	require.NoError(t, os.WriteFile(junk, []byte(strings.Repeat("not a tar", 100)), 0o644))
	_, err = Read(ctx, mustParse(t, "oci-archive:"+junk), Options{TempDir: t.TempDir()})
	assert.ErrorContains(t, err, "corrupt archive")
}

// A registry reference is internal/registry's to read: Read says so
// instead of reaching the registry.
func TestReadRefusesRegistry(t *testing.T) {
	_, err := Read(context.Background(), mustParse(t, "registry.example.com/base/busybox:1"), Options{})
	assert.ErrorContains(t, err, "registry.Read")
}

func mustParse(t *testing.T, s string) Ref {
	t.Helper()
	r, err := Parse(s, nil)
	require.NoError(t, err)
	return r
}

func writeTar(t *testing.T, file, dir string, extra *tar.Header) {
	t.Helper()
	f, err := os.Create(file)
	require.NoError(t, err)
	defer f.Close()
	tw := tar.NewWriter(f)
	if extra != nil {
		require.NoError(t, tw.WriteHeader(extra))
	}
	require.NoError(t, filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		hdr, err := tar.FileInfoHeader(fi, "")
		require.NoError(t, err)
		hdr.Name = filepath.ToSlash(rel)
		require.NoError(t, tw.WriteHeader(hdr))
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			_, err = tw.Write(data)
			require.NoError(t, err)
		}
		return nil
	}))
	require.NoError(t, tw.Close())
}

func TestCheckTag(t *testing.T) {
	for tag, want := range map[string]string{
		"v17.10.0":               "",
		"x86_64-v17.10.0":        "",
		"v17.10.0+fancy.1":       `'+' (character 9) is not allowed in a tag, only A-Z a-z 0-9 _ . -`,
		"feature/x":              `'/' (character 8) is not allowed in a tag, only A-Z a-z 0-9 _ . -`,
		"vé+1":                   `'é' (character 2) is not allowed in a tag, only A-Z a-z 0-9 _ . -`,
		"-rc1":                   `a tag cannot start with '-'`,
		"":                       "a tag cannot be empty",
		strings.Repeat("a", 129): "129 characters, a tag has at most 128",
	} {
		err := CheckTag(tag)
		if want == "" {
			assert.NoError(t, err, tag)
			continue
		}
		assert.EqualError(t, err, want, tag)
		assert.False(t, ValidTag(tag))
	}
}

// ValidTag is the distribution spec's tag grammar, written as a loop: it
// agrees with the spec's regexp on every string of up to three characters
// from an alphabet of each class, and around the length limit.
func TestValidTagIsTheSpecGrammar(t *testing.T) {
	spec := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	alphabet := []string{"a", "Z", "0", "_", ".", "-", "/", ":", "é", " "}
	var cases []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		cases = append(cases, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, n-1)
		}
	}
	grow("", 3)
	for _, n := range []int{127, 128, 129} {
		cases = append(cases, strings.Repeat("a", n), "_"+strings.Repeat("-", n-1))
	}
	for _, s := range cases {
		assert.Equal(t, spec.MatchString(s), ValidTag(s), "%q", s)
	}
}
