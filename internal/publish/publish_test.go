package publish

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// testIndex is a two-platform OCI index of random images.
func testIndex(t *testing.T) (v1.ImageIndex, []v1.Hash) {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var digests []v1.Hash
	for _, arch := range []string{"amd64", "arm64"} {
		img := testkit.Image(t, v1.Platform{OS: "linux", Architecture: arch}, 256, 2)
		d, err := img.Digest()
		require.NoError(t, err)
		digests = append(digests, d)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	return idx, digests
}

// recorder is a registry that logs manifest PUTs and can fail some.
type recorder struct {
	mu     sync.Mutex
	puts   []string
	failIf func(r *http.Request) bool
	next   http.Handler
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rc.failIf != nil && rc.failIf(r) {
		http.Error(w, "injected failure", http.StatusBadRequest)
		return
	}
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
		rc.mu.Lock()
		rc.puts = append(rc.puts, r.URL.Path[strings.Index(r.URL.Path, "/manifests/")+len("/manifests/"):])
		rc.mu.Unlock()
	}
	rc.next.ServeHTTP(w, r)
}

func startRegistry(t *testing.T) (*recorder, string) {
	t.Helper()
	rc := &recorder{}
	host := testkit.Registry(t, func(reg http.Handler) http.Handler {
		rc.next = reg
		return rc
	})
	return rc, host
}

func TestToRegistryOrder(t *testing.T) {
	rc, host := startRegistry(t)
	helper, helperDigests := testIndex(t)
	runner, _ := testIndex(t)
	images := []Image{
		{Repository: mustRepo(t, host+"/g/helper"), Index: helper, Tags: []string{"latest", "v1.2.3"},
			PlatformTags: []PlatformTag{{Manifest: helperDigests[0], Tag: "x86_64-v1.2.3"}, {Manifest: helperDigests[1], Tag: "arm64-v1.2.3"}}},
		{Repository: mustRepo(t, host+"/g/runner"), Index: runner, Tags: []string{"v1.2.3"}},
	}
	res, err := ToRegistry(context.Background(), images, RegistryOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{
		host + "/g/helper:v1.2.3", host + "/g/runner:v1.2.3",
		host + "/g/helper:x86_64-v1.2.3", host + "/g/helper:arm64-v1.2.3",
		host + "/g/helper:latest",
	}, res.Written)

	// Every manifest went up by digest before the first tag.
	firstTag := -1
	for i, p := range rc.puts {
		if !strings.HasPrefix(p, "sha256:") {
			firstTag = i
			break
		}
	}
	require.Equal(t, 6, firstTag, "2 indexes + 4 images by digest, then tags: %v", rc.puts)

	// Read back: same digest, valid, platform tag points at its manifest.
	got, err := remote.Index(testkit.Ref(t, host+"/g/helper:v1.2.3"))
	require.NoError(t, err)
	require.NoError(t, validate.Index(got))
	want, _ := helper.Digest()
	gotDigest, _ := got.Digest()
	assert.Equal(t, want, gotDigest)
	desc, err := remote.Head(testkit.Ref(t, host+"/g/helper:arm64-v1.2.3"))
	require.NoError(t, err)
	assert.Equal(t, helperDigests[1], desc.Digest)
}

func TestToRegistryNoTagWhenAnyImageFails(t *testing.T) {
	rc, host := startRegistry(t)
	helper, _ := testIndex(t)
	runner, _ := testIndex(t)
	// The runner's manifests cannot be written: the helper's tags must not move.
	rc.failIf = func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/g/runner/manifests/")
	}
	_, err := ToRegistry(context.Background(), []Image{
		{Repository: mustRepo(t, host+"/g/helper"), Index: helper, Tags: []string{"v1"}},
		{Repository: mustRepo(t, host+"/g/runner"), Index: runner, Tags: []string{"v1"}},
	}, noRetries(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/g/runner@sha256:")
	_, err = remote.Head(testkit.Ref(t, host+"/g/helper:v1"))
	assert.Error(t, err, "no tag may exist after a failure before the tag phase")
}

func TestToRegistryTagFailureListsTags(t *testing.T) {
	rc, host := startRegistry(t)
	idx, _ := testIndex(t)
	rc.failIf = func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/latest")
	}
	res, err := ToRegistry(context.Background(), []Image{{Repository: mustRepo(t, host+"/g/helper"), Index: idx, Tags: []string{"latest", "v1", "v1.2"}}},
		noRetries(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "written: ["+host+"/g/helper:v1 "+host+"/g/helper:v1.2]")
	assert.Contains(t, err.Error(), "not written: ["+host+"/g/helper:latest]")
	assert.Len(t, res.Written, 2)
}

func TestToLayoutAndArchive(t *testing.T) {
	idx, digests := testIndex(t)
	images := []Image{{Name: "helper", Index: idx, Tags: []string{"v1"}, PlatformTags: []PlatformTag{{Manifest: digests[1], Tag: "arm64-v1"}}}}
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, ToLayout(context.Background(), dir, images))
	// Writing again replaces entries instead of adding duplicates.
	require.NoError(t, ToLayout(context.Background(), dir, images))
	top, im := readLayout(t, dir)
	require.Len(t, im.Manifests, 2)
	assert.Equal(t, "helper:v1", im.Manifests[0].Annotations[specsv1.AnnotationRefName])
	assert.Equal(t, "helper:arm64-v1", im.Manifests[1].Annotations[specsv1.AnnotationRefName])
	assert.Equal(t, digests[1], im.Manifests[1].Digest)
	child, err := top.ImageIndex(im.Manifests[0].Digest)
	require.NoError(t, err)
	require.NoError(t, validate.Index(child))

	tmp := t.TempDir()
	archive := filepath.Join(t.TempDir(), "img.tar")
	epoch := time.Unix(1700000000, 0)
	require.NoError(t, ToArchive(context.Background(), archive, tmp, epoch, images))
	first, err := os.ReadFile(archive)
	require.NoError(t, err)
	require.NoError(t, ToArchive(context.Background(), archive, tmp, epoch, images))
	second, err := os.ReadFile(archive)
	require.NoError(t, err)
	assert.Equal(t, first, second, "archive bytes are reproducible")
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "the staging layout is removed")
}

func TestToLayoutUntaggedImageIsListed(t *testing.T) {
	idx, _ := testIndex(t)
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, ToLayout(context.Background(), dir, []Image{{Name: "runner", Index: idx}}))
	_, im := readLayout(t, dir)
	require.Len(t, im.Manifests, 1)
	assert.Equal(t, "runner", im.Manifests[0].Annotations[specsv1.AnnotationRefName])
}

// noRetries are RegistryOptions whose go-containerregistry retries nothing:
// a failure the test's registry injects is final.
func noRetries(t *testing.T) RegistryOptions {
	t.Helper()
	s, err := registry.NewSession(imageref.Options{Remote: []remote.Option{remote.WithRetryBackoff(remote.Backoff{Steps: 1})}})
	require.NoError(t, err)
	return RegistryOptions{Session: s}
}

func mustRepo(t *testing.T, s string) name.Repository {
	t.Helper()
	r, err := name.NewRepository(s)
	require.NoError(t, err)
	return r
}
