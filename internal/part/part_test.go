package part

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sample() *File {
	p := v1.Platform{OS: "linux", Architecture: "arm64"}
	d := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	return &File{
		Job: &Job{ID: "7", Name: "build: [linux/arm64]"}, Version: "v1", Revision: "abc",
		Created: time.Unix(1700000000, 0).UTC(), Platforms: []string{"linux/amd64", "linux/arm64"},
		Images: []Image{{Name: "helper", Repository: "registry.example.com/g/helper", Tags: []string{"v1"},
			PlatformTags: []PlatformTag{{Platform: "linux/arm64", Digest: d, Tag: "arm64-v1"}},
			Manifests:    []v1.Descriptor{{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: d, Size: 500, Platform: &p}}}},
	}
}

func write(t *testing.T, data string) string {
	path := filepath.Join(t.TempDir(), "part.json")
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	return path
}

func TestRoundTrip(t *testing.T) {
	data, err := Marshal(sample())
	require.NoError(t, err)
	path := write(t, string(data))
	f, err := Read(path)
	require.NoError(t, err)
	want := sample()
	want.SchemaVersion, want.MediaType, want.Path = SchemaVersion, MediaType, path
	assert.Equal(t, want, f)
	assert.Equal(t, path+` (job 7 "build: [linux/arm64]")`, f.Name())
}

func TestReadRefuses(t *testing.T) {
	good, err := Marshal(sample())
	require.NoError(t, err)
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", "{", "not JSON"},
		{"another file", `{"images": []}`, `mediaType "", want application/vnd.helperbuild.part.v1+json`},
		{"a later schema", strings.Replace(string(good), `"schemaVersion": 1`, `"schemaVersion": 2`, 1), "schemaVersion 2, this helperbuild reads 1"},
		{"an unknown field", strings.Replace(string(good), `"version"`, `"versoin"`, 1), `unknown field "versoin"`},
		{"no images", strings.Replace(string(good), `"images": [`, `"images": [], "x": [`, 1), `unknown field "x"`},
		{"a manifest without size", strings.Replace(string(good), `"size": 500`, `"size": 0`, 1), "image helper: a manifest without digest, size or mediaType"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, tc.data)
			_, err := Read(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "part file "+path+": ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
