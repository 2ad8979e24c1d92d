package release

import (
	"os"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// Fan-out with a Windows entry: a Linux job's part and a Windows job's
// part (pushed by digest, its base's foreign layer left out) merge, in any
// order, into the index one push of both makes: Linux first, the Windows
// entry with its os.version; no foreign blob is asked for.
func TestMergeWithAWindowsEntry(t *testing.T) {
	var reads testkit.ForeignReads
	f := newFanOut(t, "linux/amd64", false, "app")
	win := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.5830"}
	img := testkit.WindowsHelper(t, os.Environ(), testkit.WindowsBase(t, win.OSVersion, &reads), "", nil)
	repo := f.Repo(t, "jobs/app")
	d := testkit.PushByDigest(t, repo, img, &win)
	m, err := img.Manifest()
	require.NoError(t, err)
	foreign := m.Layers[0].Digest.Hex
	require.False(t, m.Layers[0].MediaType.IsDistributable())
	pf := &part.File{SchemaVersion: part.SchemaVersion, MediaType: part.MediaType, Path: "parts/windows.json",
		Job:     &part.Job{ID: "9", Name: "build: [windows/amd64:10.0.17763]"},
		Version: f.meta.Version, Revision: f.meta.Revision, Created: f.meta.Created, Platforms: []string{"windows/amd64:10.0.17763"},
		Images: []part.Image{{Name: "app", Repository: repo.String(), Annotations: f.meta.Annotations("", v1.Hash{}),
			Tags: []string{"v1.2.3", "latest"}, Manifests: []v1.Descriptor{d}}}}
	f.Parts[0].Recipe, f.Parts[0].Platforms = nil, []string{"linux/amd64"}
	f.Log.Take()

	opts := f.options()
	opts.Platforms = platforms(t, "windows/amd64:10.0.17763,linux/amd64")
	_, res := runMerge(t, []*part.File{pf, f.Parts[0]}, opts)

	want, err := manifest.Index([]manifest.Entry{{Platform: f.Platforms[0], Image: f.Images["app"][0]}, {Platform: win, Image: img}}, f.meta.Annotations("", v1.Hash{}))
	require.NoError(t, err)
	wd, err := want.Digest()
	require.NoError(t, err)
	assert.Equal(t, wd, res.Images[0].Digest, "the index one push of both makes")
	im, err := res.Images[0].Index.IndexManifest()
	require.NoError(t, err)
	var listed []v1.Platform
	for _, e := range im.Manifests {
		listed = append(listed, *e.Platform)
	}
	assert.Equal(t, "linux/amd64,windows/amd64:10.0.17763.5830", platform.FormatList(listed))
	assert.Zero(t, reads.Load())
	for _, r := range f.Log.Take() {
		assert.False(t, strings.Contains(r, foreign), "the foreign blob was asked for: %s", r)
	}
}
