package release

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/build"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/join"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// countUploads counts blobs committed at a registry (the PUT that ends an
// upload; publish's push check opens a session and cancels it).
func countUploads(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") {
				n.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func pushImage(t *testing.T, ref string, img v1.Image) {
	t.Helper()
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.Write(r, img))
}

// joinAndPublish runs JoinIndex on sources and publishes the result to
// target:v1 as helperbuild index does.
func joinAndPublish(t *testing.T, sources []string, target string, fix bool) (*Joined, error) {
	t.Helper()
	ctx := context.Background()
	img := imageref.Options{Keychain: authn.NewMultiKeychain(), Insecure: []string{"127.0.0.1"}, Blobs: imageref.NewBlobs(t.TempDir())}
	j, err := JoinIndex(ctx, IndexOptions{Sources: sources, Name: "helper", Tags: []string{"v1"},
		Join:   join.Options{Images: img, FixPlatform: fix, TempDir: t.TempDir()},
		Attest: build.Attest{Mode: product.AttestIndex, HelperbuildVersion: "v0.0.0-test"}})
	if err != nil {
		return nil, err
	}
	repo, err := name.NewRepository(target, name.Insecure)
	require.NoError(t, err)
	dest, err := publish.NewRegistry(publish.Placed{"helper": {{Repository: repo, Tags: []string{"v1"}}}}, []string{"helper"}, img, nil)
	require.NoError(t, err)
	require.NoError(t, dest.Hooks(ctx).Preflight(ctx))
	var images []publish.Image
	for _, im := range j.Result.Images {
		images = append(images, im.Publish())
	}
	return j, dest.Publish(ctx, images)
}

func TestJoinIndexPublishesAVerifiedIndexAndARerunUploadsNothing(t *testing.T) {
	src := testkit.Registry(t)
	var up atomic.Int64
	dst := testkit.Registry(t, countUploads(&up))
	var sources []string
	for _, a := range []struct{ gitlab, goarch string }{{"s390x", "s390x"}, {"x86_64", "amd64"}, {"arm64", "arm64"}, {"arm", "arm"}, {"ppc64le", "ppc64le"}} {
		p := v1.Platform{OS: "linux", Architecture: a.goarch}
		if a.goarch == "arm" {
			p.Variant = "v7"
		}
		ref := src + "/gitlab-runner-helper:" + a.gitlab + "-v17.10.0"
		pushImage(t, ref, testkit.ArchImage(t, os.Environ(), p, a.goarch))
		sources = append(sources, ref)
	}
	j, err := joinAndPublish(t, sources, dst+"/mirror/helper", false)
	require.NoError(t, err)
	im := j.Result.Images[0]
	assert.Equal(t, "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x", strings.Join(platform.FormatAll(j.Plan.Platforms()), ","))
	firstUploads := up.Load()
	assert.Positive(t, firstUploads)

	// verify, reading every layer from the target, passes.
	r, err := name.ParseReference(dst+"/mirror/helper:v1", name.Insecure)
	require.NoError(t, err)
	idx, err := remote.Index(r)
	require.NoError(t, err)
	d, err := idx.Digest()
	require.NoError(t, err)
	assert.Equal(t, im.Digest, d, "the tag names the index JoinIndex made")
	rep, err := verify.Index(context.Background(), idx, verify.Options{Platforms: j.Plan.Platforms(), TempDir: t.TempDir()})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep.Findings())

	// The provenance names each platform's source manifest by digest.
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, m.Manifests, 10, "5 images, 5 attestation manifests")
	att := m.Manifests[5]
	require.True(t, attestspec.IsAttestation(att))
	am, err := idx.Image(att.Digest)
	require.NoError(t, err)
	layers, err := am.Layers()
	require.NoError(t, err)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	var st struct {
		Predicate struct {
			BuildDefinition struct {
				BuildType            string `json:"buildType"`
				ResolvedDependencies []struct {
					URI    string            `json:"uri"`
					Digest map[string]string `json:"digest"`
				} `json:"resolvedDependencies"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	require.NoError(t, json.NewDecoder(rc).Decode(&st))
	require.NoError(t, rc.Close())
	assert.Equal(t, attest.JoinBuildType, st.Predicate.BuildDefinition.BuildType)
	require.Len(t, st.Predicate.BuildDefinition.ResolvedDependencies, 1)
	dep := st.Predicate.BuildDefinition.ResolvedDependencies[0]
	assert.Equal(t, sources[1], dep.URI, "amd64 is the index's first platform")
	assert.Equal(t, j.Plan.Entries[0].SourceManifest.Hex, dep.Digest["sha256"])

	// Again: the same digest, no blob uploaded.
	again, err := joinAndPublish(t, sources, dst+"/mirror/helper", false)
	require.NoError(t, err)
	assert.Equal(t, im.Digest, again.Result.Images[0].Digest)
	assert.Equal(t, firstUploads, up.Load(), "a re-run uploads no blob")
}

func TestJoinIndexRefusesALiarAndWritesNothing(t *testing.T) {
	src := testkit.Registry(t)
	var up atomic.Int64
	dst := testkit.Registry(t, countUploads(&up))
	amd := src + "/helper:x86_64-v1"
	liar := src + "/helper:arm64-v1"
	pushImage(t, amd, testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "amd64"}, "amd64"))
	pushImage(t, liar, testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "amd64"}, "arm64"))

	_, err := joinAndPublish(t, []string{amd, liar}, dst+"/mirror/helper", false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "source "+liar+": config says linux/amd64, binaries are linux/arm64")
	assert.Zero(t, up.Load(), "nothing was written to the target")

	j, err := joinAndPublish(t, []string{amd, liar}, dst+"/mirror/helper", true)
	require.NoError(t, err)
	require.True(t, j.Plan.Entries[1].Fixed)
	prov := string(j.Result.Images[0].Platforms[1].Attestation.Provenance.JSON)
	assert.Contains(t, prov, `"fixPlatform":true`, "the provenance says the config was replaced")
	assert.Contains(t, prov, `"sourceConfigPlatform":"linux/amd64"`)
	assert.Contains(t, prov, j.Plan.Entries[1].SourceManifest.Hex, "and names the source manifest")
	assert.NotContains(t, string(j.Result.Images[0].Platforms[0].Attestation.Provenance.JSON), "sourceConfigPlatform")
	r, err := name.ParseReference(dst+"/mirror/helper:v1", name.Insecure)
	require.NoError(t, err)
	idx, err := remote.Index(r)
	require.NoError(t, err)
	rep, err := verify.Index(context.Background(), idx, verify.Options{Platforms: j.Plan.Platforms(), TempDir: t.TempDir()})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep.Findings())
	arm, err := idx.Image(j.Plan.Entries[1].Descriptor.Digest)
	require.NoError(t, err)
	cf, err := arm.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "arm64", cf.Architecture)
}

func TestJoinIndexAttestReferrers(t *testing.T) {
	src := testkit.Registry(t)
	amd := src + "/helper:x86_64-v1"
	pushImage(t, amd, testkit.ArchImage(t, os.Environ(), v1.Platform{OS: "linux", Architecture: "amd64"}, "amd64"))
	img := imageref.Options{Keychain: authn.NewMultiKeychain(), Insecure: []string{"127.0.0.1"}, Blobs: imageref.NewBlobs(t.TempDir())}
	j, err := JoinIndex(context.Background(), IndexOptions{Sources: []string{amd}, Name: "helper", Tags: []string{"v1"},
		Join:   join.Options{Images: img, TempDir: t.TempDir()},
		Attest: build.Attest{Mode: product.AttestReferrers, HelperbuildVersion: "v0.0.0-test"}})
	require.NoError(t, err)
	im := j.Result.Images[0]
	m, err := im.Index.IndexManifest()
	require.NoError(t, err)
	assert.Len(t, m.Manifests, 1, "the index lists the image alone")
	pub := im.Publish()
	require.Len(t, pub.Referrers, 1, "the provenance, as a referrer")
	assert.Equal(t, im.Platforms[0].Digest, pub.Referrers[0].Subject)
	rm, err := pub.Referrers[0].Manifest.Manifest()
	require.NoError(t, err)
	require.NotNil(t, rm.Subject)
	assert.Equal(t, im.Platforms[0].Digest, rm.Subject.Digest)
}
