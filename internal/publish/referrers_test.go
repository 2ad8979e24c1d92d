package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// aboutImage is a manifest whose subject is the image with digest d (an
// attestation, as far as publishing goes).
func aboutImage(t *testing.T, idx v1.ImageIndex, d v1.Hash, body string) v1.Image {
	t.Helper()
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	var size int64
	for _, m := range im.Manifests {
		if m.Digest == d {
			size = m.Size
		}
	}
	require.NotZero(t, size)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, static.NewLayer([]byte(body), "application/vnd.in-toto+json"))
	require.NoError(t, err)
	return mutate.Subject(img, v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: size}).(v1.Image)
}

func referrer(t *testing.T, idx v1.ImageIndex, d v1.Hash, body string) Referrer {
	img := aboutImage(t, idx, d, body)
	digest, err := img.Digest()
	require.NoError(t, err)
	size, err := img.Size()
	require.NoError(t, err)
	return Referrer{Subject: d, Manifest: img, Entry: v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: digest, Size: size, ArtifactType: "application/vnd.in-toto+json"}}
}

func tags(t *testing.T, repo name.Repository) []string {
	t.Helper()
	got, err := remote.List(repo)
	require.NoError(t, err)
	slices.Sort(got)
	return got
}

func TestIndexAttestationsMoveNoFallbackTag(t *testing.T) {
	rc, host := startRegistry(t)
	idx, digests := testIndex(t)
	for i, d := range digests {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: aboutImage(t, idx, d, "statement "+string(rune('a'+i))), Descriptor: v1.Descriptor{
			Platform:    &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest", "vnd.docker.reference.digest": d.String()},
		}})
	}
	repo := mustRepo(t, host+"/g/helper")
	_, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}}}, RegistryOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"v1"}, tags(t, repo), "go-containerregistry's writers would have tagged sha256-<subject hex> for each attestation")
	for _, p := range rc.puts {
		assert.NotContains(t, p, "sha256-")
	}
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	for _, d := range im.Manifests {
		if sub := d.Annotations["vnd.docker.reference.digest"]; sub != "" {
			assert.Greater(t, slices.Index(rc.puts, d.Digest.String()), slices.Index(rc.puts, sub),
				"an attestation manifest goes up after the image it is about: %v", rc.puts)
			assert.GreaterOrEqual(t, slices.Index(rc.puts, sub), 0)
		}
	}
	for _, d := range im.Manifests {
		_, err := remote.Head(repo.Digest(d.Digest.String()))
		assert.NoError(t, err, "every entry is in place by digest")
	}
}

func TestReferrersFallbackTag(t *testing.T) {
	_, host := startRegistry(t)
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	// Someone else's referrer is already listed for the first platform.
	theirs := referrer(t, idx, digests[0], "a signature")
	require.NoError(t, remote.WriteIndex(repo.Digest(mustDigest(t, idx).String()), idx))
	require.NoError(t, remote.Write(repo.Digest(theirs.Entry.Digest.String()), theirs.Manifest)) // writes the fallback tag
	refs := []Referrer{referrer(t, idx, digests[0], "sbom amd64"), referrer(t, idx, digests[0], "prov amd64"), referrer(t, idx, digests[1], "sbom arm64")}

	res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: refs}}, RegistryOptions{})
	require.NoError(t, err)
	fb0, fb1 := FallbackTag(digests[0]), FallbackTag(digests[1])
	assert.Equal(t, []string{repo.Tag(fb0).String(), repo.Tag(fb1).String(), repo.Tag("v1").String()}, res.Written, "fallback tags before the release's")

	for sub, want := range map[v1.Hash][]Referrer{digests[0]: {theirs, refs[0], refs[1]}, digests[1]: {refs[2]}} {
		got, err := remote.Referrers(repo.Digest(sub.String()))
		require.NoError(t, err)
		im, err := got.IndexManifest()
		require.NoError(t, err)
		var gotDigests, wantDigests []string
		for _, d := range im.Manifests {
			gotDigests = append(gotDigests, d.Digest.String())
		}
		for _, r := range want {
			wantDigests = append(wantDigests, r.Entry.Digest.String())
		}
		slices.Sort(wantDigests)
		assert.Equal(t, wantDigests, gotDigests, "the fallback index keeps what it listed and is sorted by digest")
	}

	// Running again changes nothing.
	_, err = ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: refs}}, RegistryOptions{})
	require.NoError(t, err)
	got, err := remote.Referrers(repo.Digest(digests[0].String()))
	require.NoError(t, err)
	im, err := got.IndexManifest()
	require.NoError(t, err)
	assert.Len(t, im.Manifests, 3)
}

func TestReferrersAPIWritesNoTag(t *testing.T) {
	host := testkit.ReferrersRegistry(t)
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	refs := []Referrer{referrer(t, idx, digests[0], "sbom amd64"), referrer(t, idx, digests[1], "sbom arm64")}
	res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: refs}}, RegistryOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{repo.Tag("v1").String()}, res.Written)
	assert.Equal(t, []string{"v1"}, tags(t, repo), "the registry lists referrers itself: no fallback tag")
	got, err := remote.Referrers(repo.Digest(digests[1].String()))
	require.NoError(t, err)
	im, err := got.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 1)
	assert.Equal(t, refs[1].Entry.Digest, im.Manifests[0].Digest)
}

func TestReferrersRefusedWhereTheFallbackTagIsTheSubject(t *testing.T) {
	host := testkit.Registry(t, testkit.ResolvesDigestTags)
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	refs := []Referrer{referrer(t, idx, digests[0], "sbom amd64")}
	_, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: refs}}, RegistryOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "registry "+host+" resolves the tag "+FallbackTag(digests[0])+" to the manifest "+digests[0].String()+" itself")
	assert.Contains(t, err.Error(), "--attest index")
	assert.False(t, strings.Contains(err.Error(), "written:"), "refused before the tag phase")
	_, err = remote.Head(repo.Tag("v1"))
	assert.Error(t, err, "no tag moved")
	assert.Empty(t, tags(t, repo))
}

func TestLayoutTakesNoReferrers(t *testing.T) {
	idx, digests := testIndex(t)
	err := ToLayout(context.Background(), t.TempDir(), []Image{{Index: idx, Tags: []string{"v1"}, Referrers: []Referrer{referrer(t, idx, digests[0], "x")}}})
	assert.ErrorContains(t, err, "--attest index")
}

func mustDigest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	d, err := idx.Digest()
	require.NoError(t, err)
	return d
}

// refuseReferrers answers every request to the referrers route with status.
func refuseReferrers(status int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/referrers/") {
				w.WriteHeader(status)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// A registry that answers 401 or 403 on the referrers route has no API
// there for the release: the referrers go to the fallback tag.
func TestReferrersRouteRefusedMeansFallback(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			host := testkit.Registry(t, refuseReferrers(status))
			idx, digests := testIndex(t)
			repo := mustRepo(t, host+"/g/helper")
			refs := []Referrer{referrer(t, idx, digests[0], "sbom amd64")}
			res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: refs}}, RegistryOptions{})
			require.NoError(t, err)
			assert.Equal(t, []string{repo.Tag(FallbackTag(digests[0])).String(), repo.Tag("v1").String()}, res.Written)
		})
	}
}

// When the fallback tag is refused too, the release fails before any tag
// moves, naming the tag.
func TestReferrersRouteAndFallbackTagRefused(t *testing.T) {
	host := testkit.Registry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/referrers/") || strings.Contains(r.URL.Path, "/manifests/sha256-") {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	refs := []Referrer{referrer(t, idx, digests[0], "sbom amd64")}
	_, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: refs}}, RegistryOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read "+repo.String()+":"+FallbackTag(digests[0]))
	assert.Empty(t, tags(t, repo), "no tag moved")
}

// Another writer's PUT of the fallback tag (made from what it read before
// the release wrote) that lands between the release's write and its
// read-back replaces the release's index with one that lacks its referrers: the release sees it, adds them again, and both writers'
// referrers are listed.
func TestReferrersFallbackTagLostUpdate(t *testing.T) {
	idx, digests := testIndex(t)
	theirs := referrer(t, idx, digests[0], "their signature")
	fb := FallbackTag(digests[0])
	var once sync.Once
	var armed atomic.Bool
	host := testkit.Registry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if !armed.Load() || r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/manifests/"+fb) {
				return
			}
			once.Do(func() { // the other writer, who read the tag before the release wrote it
				body, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{theirs.Entry}})
				require.NoError(t, err)
				req := httptest.NewRequest(http.MethodPut, r.URL.Path, bytes.NewReader(body))
				req.Header.Set("Content-Type", string(types.OCIImageIndex))
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, req)
				require.Equal(t, http.StatusCreated, rec.Code)
			})
		})
	})
	repo := mustRepo(t, host+"/g/helper")
	// Their referrer is in the registry (go-containerregistry lists it in the fallback tag).
	require.NoError(t, remote.WriteIndex(repo.Digest(mustDigest(t, idx).String()), idx))
	require.NoError(t, remote.Write(repo.Digest(theirs.Entry.Digest.String()), theirs.Manifest))
	armed.Store(true)
	ours := []Referrer{referrer(t, idx, digests[0], "sbom amd64"), referrer(t, idx, digests[0], "prov amd64")}
	var log testkit.Buffer
	_, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: ours}},
		RegistryOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	require.NoError(t, err)
	got, err := remote.Referrers(repo.Digest(digests[0].String()))
	require.NoError(t, err)
	im, err := got.IndexManifest()
	require.NoError(t, err)
	var gotDigests []string
	for _, d := range im.Manifests {
		gotDigests = append(gotDigests, d.Digest.String())
	}
	want := []string{theirs.Entry.Digest.String(), ours[0].Entry.Digest.String(), ours[1].Entry.Digest.String()}
	slices.Sort(want)
	assert.Equal(t, want, gotDigests, "nothing lost")
	assert.Contains(t, log.String(), "referrers tag replaced by another writer")
}

// Another writer that read the fallback tag before the release wrote it
// and PUTs its own index after the release's read-back erases the
// release's referrers without either read-back seeing it: the release
// reads every fallback tag again after leaving them alone, sees its
// referrers gone and adds them again on top of the other writer's.
func TestReferrersFallbackTagLateLostUpdate(t *testing.T) {
	idx, digests := testIndex(t)
	theirs := referrer(t, idx, digests[0], "their signature")
	fb := FallbackTag(digests[0])
	var once sync.Once
	var armed, ourPut atomic.Bool
	host := testkit.Registry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if !armed.Load() || !strings.HasSuffix(r.URL.Path, "/manifests/"+fb) {
				return
			}
			if r.Method == http.MethodPut {
				ourPut.Store(true)
				return
			}
			if r.Method != http.MethodGet || !ourPut.Load() {
				return
			}
			once.Do(func() { // after the release's read-back: the stale PUT
				body, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{theirs.Entry}})
				require.NoError(t, err)
				req := httptest.NewRequest(http.MethodPut, r.URL.Path, bytes.NewReader(body))
				req.Header.Set("Content-Type", string(types.OCIImageIndex))
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, req)
				require.Equal(t, http.StatusCreated, rec.Code)
			})
		})
	})
	repo := mustRepo(t, host+"/g/helper")
	require.NoError(t, remote.WriteIndex(repo.Digest(mustDigest(t, idx).String()), idx))
	require.NoError(t, remote.Write(repo.Digest(theirs.Entry.Digest.String()), theirs.Manifest))
	armed.Store(true)
	ours := []Referrer{referrer(t, idx, digests[0], "sbom amd64"), referrer(t, idx, digests[0], "prov amd64")}
	var log testkit.Buffer
	p, err := newPublisher(RegistryOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	require.NoError(t, err)
	var waits []time.Duration
	p.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	images := []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: ours}}
	_, err = p.release(context.Background(), images, []name.Repository{repo}, Signing{})
	require.NoError(t, err)
	got, err := remote.Referrers(repo.Digest(digests[0].String()))
	require.NoError(t, err)
	im, err := got.IndexManifest()
	require.NoError(t, err)
	var gotDigests []string
	for _, d := range im.Manifests {
		gotDigests = append(gotDigests, d.Digest.String())
	}
	want := []string{theirs.Entry.Digest.String(), ours[0].Entry.Digest.String(), ours[1].Entry.Digest.String()}
	slices.Sort(want)
	assert.Equal(t, want, gotDigests, "nothing lost")
	assert.Contains(t, log.String(), "referrers tag replaced by another writer after ours")
	require.Len(t, waits, 2, "one settle before the check that found the loss, one before the check that found it repaired")
	assert.GreaterOrEqual(t, waits[0], 250*time.Millisecond)
}

// The settle is ten times the slowest fallback write, within [250ms, 5s].
func TestSettleBounds(t *testing.T) {
	assert.Equal(t, 250*time.Millisecond, settleFor(time.Millisecond))
	assert.Equal(t, 2*time.Second, settleFor(200*time.Millisecond))
	assert.Equal(t, 5*time.Second, settleFor(time.Minute))
}

// A registry (or a front) that answers the referrers API with a list that
// lacks what the release just pushed, as an empty index, does not keep them:
// the fallback tags are written, with a warning, so the attestations stay
// findable.
func TestReferrersAPIThatListsNothingMeansFallback(t *testing.T) {
	host := testkit.ReferrersRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/referrers/") {
				w.Header().Set("Content-Type", string(types.OCIImageIndex))
				_, _ = w.Write([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	idx, digests := testIndex(t)
	repo := mustRepo(t, host+"/g/helper")
	refs := []Referrer{referrer(t, idx, digests[0], "sbom amd64")}
	var logs bytes.Buffer
	res, err := ToRegistry(context.Background(), []Image{{Repository: repo, Index: idx, Tags: []string{"v1"}, Referrers: refs}},
		RegistryOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	assert.Equal(t, []string{repo.Tag(FallbackTag(digests[0])).String(), repo.Tag("v1").String()}, res.Written)
	assert.Contains(t, logs.String(), "answers the referrers API but does not list "+refs[0].Entry.Digest.String())
}
