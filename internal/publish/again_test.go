package publish

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// releaseOnce runs what a push does with a Registry destination: each
// platform's blobs through OnImage while it builds, then Publish.
func releaseOnce(t *testing.T, host string, img Image) {
	t.Helper()
	ctx := context.Background()
	d, err := NewRegistry(ByPrefix{Prefix: host + "/g"}, []string{img.Name}, imageref.Options{Keychain: authn.NewMultiKeychain()}, nil)
	require.NoError(t, err)
	h := d.Hooks(ctx)
	im, err := img.Index.IndexManifest()
	require.NoError(t, err)
	for _, desc := range im.Manifests {
		child, err := img.Index.Image(desc.Digest)
		require.NoError(t, err)
		require.NoError(t, h.OnImage(ctx, img.Name, *desc.Platform, child))
	}
	require.NoError(t, d.Publish(ctx, []Image{img}))
}

// count is how many of reqs are METHOD with a path that contains part.
func count(reqs []string, method, part string) int {
	n := 0
	for _, r := range reqs {
		if strings.HasPrefix(r, method+" ") && strings.Contains(r, part) {
			n++
		}
	}
	return n
}

// A release pushed again asks for each manifest once and for no blob: the
// Uploader finds each platform's manifest in place (its blobs with it),
// and publishing neither sends nor checks again what it found; a tag found
// at the index is not written again. A first release asks for a platform
// manifest once before it is PUT (the Uploader's question; publish does
// not repeat it) and once after.
func TestPushAgainAsksOnlyForManifests(t *testing.T) {
	var reqs testkit.RequestLog
	host := testkit.Registry(t, reqs.Wrap)
	idx, digests := testIndex(t)
	indexDigest, err := idx.Digest()
	require.NoError(t, err)
	img := Image{Name: "app", Index: idx, Tags: []string{"v1"}}

	releaseOnce(t, host, img)
	first := reqs.Take()
	for _, d := range digests {
		assert.Equal(t, 2, count(first, "HEAD", "/manifests/"+d.String()), "first release: asked before its PUT and checked after\n%s", strings.Join(first, "\n"))
		assert.Equal(t, 1, count(first, "PUT", "/manifests/"+d.String()))
	}
	assert.Equal(t, 1, count(first, "PUT", "/manifests/"+indexDigest.String()))
	assert.Positive(t, count(first, "PUT", "/blobs/uploads/"), "first release uploads blobs")
	assert.Zero(t, count(first, "HEAD", "/manifests/v1"), "a new index's tag is written without asking")

	releaseOnce(t, host, img)
	again := reqs.Take()
	var asked []string
	for _, r := range again {
		if r != "GET /v2/" {
			asked = append(asked, r)
		}
	}
	want := []string{"HEAD /v2/g/app/manifests/v1"}
	for _, d := range append(digests, indexDigest) {
		want = append(want, "HEAD /v2/g/app/manifests/"+d.String())
	}
	assert.ElementsMatch(t, want, asked, "pushed again: one question per manifest and one for the tag, already in place")
	tag := mustTag(t, host+"/g/app:v1")
	desc, err := remote.Head(tag)
	require.NoError(t, err)
	assert.Equal(t, indexDigest, desc.Digest)

	// The tag moved meanwhile (another release): pushed again, it is put back.
	require.NoError(t, remote.Write(tag, testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 64, 1)))
	reqs.Take()
	releaseOnce(t, host, img)
	assert.Equal(t, 1, count(reqs.Take(), "PUT", "/manifests/v1"), "a tag elsewhere is written")
	desc, err = remote.Head(tag)
	require.NoError(t, err)
	assert.Equal(t, indexDigest, desc.Digest)
}

// manifestRequests are the requests of reqs for the manifest d, as
// "METHOD", in order.
func manifestRequests(reqs []string, d v1.Hash) []string {
	var out []string
	for _, r := range reqs {
		if method, path, _ := strings.Cut(r, " "); strings.HasSuffix(path, "/manifests/"+d.String()) {
			out = append(out, method)
		}
	}
	return out
}

// newUploader is an Uploader on its own Session, to the repository g/app
// of a registry whose requests reqs logs.
func newUploader(t *testing.T) (reqs *testkit.RequestLog, s *registry.Session, u *Uploader, repo name.Repository) {
	reqs = &testkit.RequestLog{}
	host := testkit.Registry(t, reqs.Wrap)
	s, err := registry.NewSession(imageref.Options{Keychain: authn.NewMultiKeychain()})
	require.NoError(t, err)
	return reqs, s, NewUploader(s, nil), mustRepo(t, host+"/g/app")
}

// An image with a layer the Uploader has just streamed is new work: its
// blobs go without first asking for its manifest. Each image's manifest is
// then put by digest and asked for once, so the release finds it in place.
func TestStreamedImageIsNotAskedFor(t *testing.T) {
	reqs, s, u, repo := newUploader(t)
	img := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 256, 2)
	layers, err := img.Layers()
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, u.Layer(ctx, repo, layers[1]))
	require.NoError(t, u.Image(ctx, repo, img))
	d, err := img.Digest()
	require.NoError(t, err)
	got := reqs.Take()
	assert.Equal(t, []string{"PUT", "HEAD"}, manifestRequests(got, d), "put, then checked; not asked for before:\n%s", strings.Join(got, "\n"))
	in, known := s.Found(repo.Digest(d.String()))
	assert.True(t, known)
	assert.True(t, in)

	other := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "arm64"}, 256, 2)
	require.NoError(t, u.Image(ctx, repo, other))
	od, err := other.Digest()
	require.NoError(t, err)
	assert.Equal(t, []string{"HEAD", "PUT", "HEAD"}, manifestRequests(reqs.Take(), od), "an image with no streamed layer is asked for first")
	in, known = s.Found(repo.Digest(od.String()))
	assert.True(t, known)
	assert.True(t, in)
}

// A manifest naming a subject (an attestation as an OCI 1.1 referrer) is
// not put ahead of the release: its blobs are uploaded, its manifest is
// left for the release to put once its subject is in place.
func TestUploaderLeavesSubjectManifests(t *testing.T) {
	reqs, s, u, repo := newUploader(t)
	subject := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 256, 1)
	sd, err := partial.Descriptor(subject)
	require.NoError(t, err)
	about, ok := mutate.Subject(testkit.Image(t, v1.Platform{OS: "linux", Architecture: "arm64"}, 64, 1), *sd).(v1.Image)
	require.True(t, ok)
	d, err := about.Digest()
	require.NoError(t, err)
	require.NoError(t, u.Image(context.Background(), repo, about))
	got := reqs.Take()
	assert.Equal(t, []string{"HEAD"}, manifestRequests(got, d), "asked for, not put:\n%s", strings.Join(got, "\n"))
	assert.Positive(t, count(got, "PUT", "/blobs/uploads/"), "its blobs are uploaded")
	in, known := s.Found(repo.Digest(d.String()))
	assert.True(t, known)
	assert.False(t, in)
}

// A registry that does not yet answer for a platform manifest the
// Uploader just put (a lagging replica behind a load balancer) gets it
// from the release again: publish puts it a second time and checks it
// before any tag moves. (The release's own check of a manifest is not
// retried: a registry that lags there fails the release, tags untouched.)
func TestLaggingManifestIsPutAgain(t *testing.T) {
	var reqs testkit.RequestLog
	idx, digests := testIndex(t)
	indexDigest, err := idx.Digest()
	require.NoError(t, err)
	platformManifest := map[string]bool{}
	for _, d := range digests {
		platformManifest["/v2/g/app/manifests/"+d.String()] = true
	}
	var mu sync.Mutex
	lagged := map[string]bool{} // manifest paths whose first HEAD after their PUT was a 404
	put := map[string]bool{}
	lag := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if platformManifest[r.URL.Path] {
				mu.Lock()
				miss := r.Method == http.MethodHead && put[r.URL.Path] && !lagged[r.URL.Path]
				lagged[r.URL.Path] = lagged[r.URL.Path] || miss
				put[r.URL.Path] = put[r.URL.Path] || r.Method == http.MethodPut
				mu.Unlock()
				if miss {
					w.WriteHeader(http.StatusNotFound)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	host := testkit.Registry(t, lag, reqs.Wrap) // reqs sees lag's answers
	releaseOnce(t, host, Image{Name: "app", Index: idx, Tags: []string{"v1"}})
	got := reqs.Take()
	for _, d := range digests {
		assert.Equal(t, []string{"HEAD", "PUT", "HEAD", "PUT", "HEAD"}, manifestRequests(got, d),
			"asked, put, missing; put again and checked by the release:\n%s", strings.Join(got, "\n"))
	}
	desc, err := remote.Head(mustTag(t, host+"/g/app:v1"))
	require.NoError(t, err)
	assert.Equal(t, indexDigest, desc.Digest)
}
