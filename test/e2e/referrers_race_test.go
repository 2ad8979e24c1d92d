//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

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
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/publish"
	registryio "github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/retry"
)

// referrersRaceRuns is how many times two writers race for the same
// fallback tags.
const referrersRaceRuns = 20

// TestReferrersFallbackConcurrentWriters: docker-registry 2.8 has no
// referrers API, so each subject's referrers are listed in its fallback tag
// sha256-<hex>, a read-modify-write. Two releases of the same index, each
// with referrers of its own about both platform manifests (two jobs
// attaching different attestations or signatures), publish at the same
// moment, 20 times; every referrer of both must be listed in each fallback
// tag afterwards.
func TestReferrersFallbackConcurrentWriters(t *testing.T) {
	s := suiteFor(t)
	idx := testkit.Index(t, 512, 1, v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm64"})
	subjects := platformDescriptors(t, idx)
	var losses, readds, late, retries int
	for run := range referrersRaceRuns {
		repo, err := name.NewRepository(s.plain.ref(fmt.Sprintf("e2e/referrers-race-%d", run)))
		require.NoError(t, err)
		require.NoError(t, remote.WriteIndex(repo.Tag("base"), idx), "push the index before the race")
		lost, replaced, lateReadds, retried := raceFallbackWriters(t, repo, idx, subjects, run)
		late += lateReadds
		losses += lost
		readds += replaced
		retries += retried
	}
	t.Logf("%d runs, 2 writers x %d subjects each: %d referrers lost, %d re-adds after another writer's index replaced ours (%d of them found by the check after the settle), %d requests retried", referrersRaceRuns, len(subjects), losses, readds, late, retries)
	assert.Zero(t, losses, "referrers lost from the fallback tags")
}

// raceFallbackWriters publishes idx to repo from two goroutines at once,
// each with a referrer of its own per subject, and returns how many of the
// referrers the fallback tags lack afterwards and how many times a writer
// logged that another writer's index replaced its own (late: found by the
// check after the settle) and how many
// requests the retry transport retried.
func raceFallbackWriters(t *testing.T, repo name.Repository, idx v1.ImageIndex, subjects []v1.Descriptor, run int) (lost, replaced, late, retried int) {
	t.Helper()
	const writers = 2
	want := map[v1.Hash][]string{} // subject -> referrer digests
	images := make([]publish.Image, writers)
	for w := range writers {
		img := publish.Image{Repository: repo, Index: idx, Tags: []string{"v1"}}
		for _, subj := range subjects {
			r := raceReferrer(t, subj, fmt.Sprintf("run %d writer %d about %s", run, w, subj.Digest))
			img.Referrers = append(img.Referrers, r)
			want[subj.Digest] = append(want[subj.Digest], r.Entry.Digest.String())
		}
		images[w] = img
	}
	logs := make([]testkit.Buffer, writers)
	errs := make([]error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			log := slog.New(slog.NewTextHandler(&logs[w], nil))
			opts := retry.DefaultOptions() // as helperbuild reaches registries
			opts.Logger = log
			rt, err := retry.New(http.DefaultTransport, opts)
			if err != nil {
				errs[w] = err
				return
			}
			session, err := registryio.NewSession(imageref.Options{Transport: rt, Remote: rt.RemoteOptions()})
			if err != nil {
				errs[w] = err
				return
			}
			<-start
			_, errs[w] = publish.ToRegistry(context.Background(), images[w:w+1], publish.RegistryOptions{Session: session, Logger: log})
		})
	}
	close(start)
	wg.Wait()
	for w := range writers {
		require.NoError(t, errs[w], "run %d writer %d:\n%s", run, w, logs[w].String())
		replaced += strings.Count(logs[w].String(), "referrers tag replaced by another writer")
		late += strings.Count(logs[w].String(), "replaced by another writer after ours")
		retried += strings.Count(logs[w].String(), "retrying request")
	}
	for _, subj := range subjects {
		listed := fallbackListing(t, repo, subj.Digest)
		for _, d := range want[subj.Digest] {
			if !slices.Contains(listed, d) {
				lost++
				t.Errorf("run %d: %s:%s lacks the referrer %s (lists %v)", run, repo, publish.FallbackTag(subj.Digest), d, listed)
			}
		}
	}
	return lost, replaced, late, retried
}

// fallbackListing is what subject's fallback tag lists, read with
// go-containerregistry (which reads the tag where there is no API).
func fallbackListing(t *testing.T, repo name.Repository, subject v1.Hash) []string {
	t.Helper()
	idx, err := remote.Referrers(repo.Digest(subject.String()))
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	var out []string
	for _, d := range im.Manifests {
		out = append(out, d.Digest.String())
	}
	return out
}

// platformDescriptors are idx's platform manifests.
func platformDescriptors(t *testing.T, idx v1.ImageIndex) []v1.Descriptor {
	t.Helper()
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2)
	return im.Manifests
}

// raceReferrer is an artifact whose subject is subj, distinct by body.
func raceReferrer(t *testing.T, subj v1.Descriptor, body string) publish.Referrer {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, static.NewLayer([]byte(body), "application/vnd.in-toto+json"))
	require.NoError(t, err)
	img = mutate.Subject(img, v1.Descriptor{MediaType: subj.MediaType, Digest: subj.Digest, Size: subj.Size}).(v1.Image)
	digest, err := img.Digest()
	require.NoError(t, err)
	size, err := img.Size()
	require.NoError(t, err)
	return publish.Referrer{Subject: subj.Digest, Manifest: img,
		Entry: v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: digest, Size: size, ArtifactType: "application/vnd.in-toto+json"}}
}
