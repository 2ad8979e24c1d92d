package publish

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/part"
)

func newByDigest(t *testing.T, host string) (*ByDigest, string) {
	t.Helper()
	reg, err := NewRegistry(ByPrefix{Prefix: host + "/g/"}, []string{"helper"}, imageref.Options{Keychain: authn.NewMultiKeychain()}, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "part.json")
	return &ByDigest{Registry: reg, PartFile: path, Part: part.File{Version: "v1", Revision: "abc"}}, path
}

// TestByDigestPlatformsLeaveOutAttestations: a config-free job without
// --platforms lists the platforms it built as the release's, and its
// attestation entries (unknown/unknown) are none of them.
func TestByDigestPlatformsLeaveOutAttestations(t *testing.T) {
	_, host := startRegistry(t)
	d, path := newByDigest(t, host)
	idx, digests := testIndex(t)
	for _, dg := range digests {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: aboutImage(t, idx, dg, "statement "+dg.Hex[:8]), Descriptor: v1.Descriptor{
			Platform:    &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest", "vnd.docker.reference.digest": dg.String()},
		}})
	}
	require.NoError(t, d.Publish(context.Background(), []Image{{Name: "helper", Index: idx}}))
	f, err := part.Read(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"linux/amd64", "linux/arm64"}, f.Platforms)
	require.Len(t, f.Images, 1)
	assert.Len(t, f.Images[0].Manifests, 4, "the attestation entries still travel in the part")
}

// TestByDigestRefusesReferrers: a job writes no tag, so referrers (which
// need a fallback tag where the registry has no API) cannot go with it.
func TestByDigestRefusesReferrers(t *testing.T) {
	_, host := startRegistry(t)
	d, path := newByDigest(t, host)
	idx, digests := testIndex(t)
	err := d.Publish(context.Background(), []Image{{Name: "helper", Index: idx, Referrers: []Referrer{referrer(t, idx, digests[0], "sbom")}}})
	require.ErrorContains(t, err, "image helper: a by-digest push cannot carry referrers; attest in the index (--attest index)")
	assert.NoFileExists(t, path)
}
