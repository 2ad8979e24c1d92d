package attest

import (
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// statements returns the SBOM and provenance statements of fullSpec's
// image.
func statements(t *testing.T) (SBOMSpec, Statement, Statement) {
	t.Helper()
	spec := fullSpec(t)
	doc, err := SBOM(spec)
	require.NoError(t, err)
	sbom, err := SBOMStatement(spec.Image, doc)
	require.NoError(t, err)
	prov, err := Provenance(provenanceSpec(t))
	require.NoError(t, err)
	return spec, sbom, prov
}

func TestAttestationManifestLayout(t *testing.T) {
	spec, sbom, prov := statements(t)
	subject := spec.Image.Manifest
	art, err := AttestationManifest(subject, sbom, prov)
	require.NoError(t, err)
	raw, err := art.RawManifest()
	require.NoError(t, err)
	golden(t, "attestation-manifest", raw)

	// The exact shape BuildKit writes by default
	// (exporter/containerimage/writer.go, commitAttestationsManifest
	// without oci-artifact): an image config, no subject, no artifactType.
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	cfg, err := art.RawConfigFile()
	require.NoError(t, err)
	cfgDigest, err := art.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"schemaVersion": 2.0,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{
			"mediaType": "application/vnd.oci.image.config.v1+json",
			"digest":    cfgDigest.String(),
			"size":      float64(len(cfg)),
		},
		"layers": []any{
			map[string]any{
				"mediaType":   "application/vnd.in-toto+json",
				"digest":      sbom.Digest().String(),
				"size":        float64(len(sbom.JSON)),
				"annotations": map[string]any{"in-toto.io/predicate-type": "https://spdx.dev/Document"},
			},
			map[string]any{
				"mediaType":   "application/vnd.in-toto+json",
				"digest":      prov.Digest().String(),
				"size":        float64(len(prov.JSON)),
				"annotations": map[string]any{"in-toto.io/predicate-type": "https://slsa.dev/provenance/v1"},
			},
		},
	}, m)
	// Its config is BuildKit's attestationsConfig (unknown/unknown) but
	// for the diff IDs: the statements are not layers.
	assert.Equal(t, `{"architecture":"unknown","os":"unknown","config":{},"rootfs":{"type":"layers","diff_ids":[]}}`, string(cfg))
	require.NoError(t, validate.Image(art), "crane validate accepts it")

	// Its index entry, as BuildKit adds it after the platform images.
	d, err := art.Digest()
	require.NoError(t, err)
	assert.Equal(t, v1.Descriptor{
		MediaType: types.OCIManifestSchema1,
		Size:      int64(len(raw)),
		Digest:    d,
		Annotations: map[string]string{
			"vnd.docker.reference.type":   "attestation-manifest",
			"vnd.docker.reference.digest": subject.Digest.String(),
		},
		Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
	}, art.IndexEntry())
	e := art.IndexEntry()
	e.Annotations["x"], e.Platform.OS = "y", "linux"
	assert.NotContains(t, art.IndexEntry().Annotations, "x", "IndexEntry hands out a copy")
	assert.Equal(t, "unknown", art.IndexEntry().Platform.OS)

	// Same statements, same bytes.
	again, err := AttestationManifest(subject, sbom, prov)
	require.NoError(t, err)
	d2, _ := again.Digest()
	assert.Equal(t, d, d2)
}

// An Artifact is a v1.Image whose blobs are the empty config and the
// statements, as written.
func TestArtifactIsAnImage(t *testing.T) {
	spec, sbom, prov := statements(t)
	art, err := AttestationManifest(spec.Image.Manifest, sbom, prov)
	require.NoError(t, err)

	m, err := art.Manifest()
	require.NoError(t, err)
	assert.Empty(t, m.ArtifactType)
	assert.Nil(t, m.Subject)
	cfgName, err := art.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, m.Config.Digest, cfgName)
	cf, err := art.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "unknown/unknown", cf.OS+"/"+cf.Architecture)
	assert.Empty(t, cf.RootFS.DiffIDs)
	rawCfg, err := art.RawConfigFile()
	require.NoError(t, err)
	cfg, err := art.LayerByDigest(cfgName)
	require.NoError(t, err)
	assert.Equal(t, string(rawCfg), readAll(t, cfg))
	layers, err := art.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 2)
	assert.Equal(t, string(sbom.JSON), readAll(t, layers[0]))
	byDiffID, err := art.LayerByDiffID(prov.Digest())
	require.NoError(t, err)
	assert.Equal(t, string(prov.JSON), readAll(t, byDiffID))
	_, err = art.LayerByDigest(hash(t, "nothing"))
	assert.Error(t, err)

	// Written to a layout and read back: the same manifest bytes and blobs.
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendImage(art))
	d, _ := art.Digest()
	back, err := p.Image(d)
	require.NoError(t, err)
	wantRaw, _ := art.RawManifest()
	gotRaw, err := back.RawManifest()
	require.NoError(t, err)
	assert.Equal(t, string(wantRaw), string(gotRaw))
	cfgBlob, err := p.Blob(cfgName)
	require.NoError(t, err)
	b, _ := io.ReadAll(cfgBlob)
	cfgBlob.Close()
	assert.Equal(t, string(rawCfg), string(b))
	for _, s := range []Statement{sbom, prov} {
		rc, err := p.Blob(s.Digest())
		require.NoError(t, err)
		b, _ := io.ReadAll(rc)
		rc.Close()
		assert.Equal(t, string(s.JSON), string(b))
	}

	// Nothing in it or its index entry is OCI 1.1-only: no artifactType.
	assert.Empty(t, art.IndexEntry().ArtifactType)
}

func readAll(t *testing.T, l v1.Layer) string {
	t.Helper()
	rc, err := l.Compressed()
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return string(b)
}

// pushPlatform pushes a small image to host and returns its descriptor,
// the subject of what follows.
func pushPlatform(t *testing.T, host string) (name.Repository, v1.Descriptor) {
	t.Helper()
	repo, err := name.NewRepository(host+"/group/helper", name.Insecure)
	require.NoError(t, err)
	img := testkit.Image(t, linuxV7, 64, 1)
	require.NoError(t, remote.Write(repo.Tag("v1"), img))
	d, err := img.Digest()
	require.NoError(t, err)
	size, _ := img.Size()
	return repo, v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: size, Platform: &linuxV7}
}

// Against a registry with the OCI 1.1 referrers API, the statement and
// SPDX referrers are listed for their subject with their artifact types
// and the predicate type annotation.
func TestReferrers(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true)))
	t.Cleanup(srv.Close)
	repo, subject := pushPlatform(t, strings.TrimPrefix(srv.URL, "http://"))

	im := testImage(t, linuxV7)
	im.Manifest = subject
	doc, err := SBOM(SBOMSpec{Image: im, Created: epoch})
	require.NoError(t, err)
	sbom, err := SBOMStatement(im, doc)
	require.NoError(t, err)
	pspec := provenanceSpec(t)
	pspec.Image = im
	prov, err := Provenance(pspec)
	require.NoError(t, err)

	var arts []*Artifact
	for _, s := range []Statement{sbom, prov} {
		a, err := StatementReferrer(subject, s)
		require.NoError(t, err)
		arts = append(arts, a)
	}
	spdxArt, err := SPDXReferrer(subject, doc)
	require.NoError(t, err)
	arts = append(arts, spdxArt)

	m, err := spdxArt.Manifest()
	require.NoError(t, err)
	assert.Equal(t, attestspec.MediaTypeSPDX, m.ArtifactType)
	require.Len(t, m.Layers, 1)
	assert.Equal(t, types.MediaType(attestspec.MediaTypeSPDX), m.Layers[0].MediaType)
	assert.Equal(t, subject.Digest, m.Subject.Digest)
	assert.Nil(t, m.Subject.Platform, "the subject is media type, digest and size")

	want := map[v1.Hash]v1.Descriptor{}
	for _, a := range arts {
		d, _ := a.Digest()
		require.NoError(t, remote.Write(repo.Digest(d.String()), a))
		want[d] = a.IndexEntry()
	}
	idx, err := remote.Referrers(repo.Digest(subject.Digest.String()))
	require.NoError(t, err)
	listed, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, listed.Manifests, 3)
	for _, got := range listed.Manifests {
		w, ok := want[got.Digest]
		require.True(t, ok, "listed %s", got.Digest)
		// go-containerregistry's registry (v0.22.1) lists config.mediaType
		// as the artifactType even when the manifest has its own, which the
		// distribution spec puts first; the manifests read back below carry
		// ours.
		assert.Contains(t, []string{w.ArtifactType, string(types.OCIEmptyJSON)}, got.ArtifactType)
		assert.Equal(t, w.Annotations, got.Annotations)
		assert.Equal(t, w.Size, got.Size)
	}
	provEntry := want[mustDigest(t, arts[1])]
	assert.Equal(t, attestspec.MediaTypeInToto, provEntry.ArtifactType)
	assert.Equal(t, map[string]string{attestspec.AnnotationPredicateType: attestspec.PredicateSLSA}, provEntry.Annotations)

	// Read back by digest: the bytes pushed, with the artifact type.
	for _, a := range arts {
		d, _ := a.Digest()
		desc, err := remote.Get(repo.Digest(d.String()))
		require.NoError(t, err)
		raw, _ := a.RawManifest()
		assert.Equal(t, string(raw), string(desc.Manifest))
		back, err := v1.ParseManifest(strings.NewReader(string(desc.Manifest)))
		require.NoError(t, err)
		assert.Equal(t, a.IndexEntry().ArtifactType, back.ArtifactType)
	}
}

func mustDigest(t *testing.T, a *Artifact) v1.Hash {
	t.Helper()
	d, err := a.Digest()
	require.NoError(t, err)
	return d
}

// go-containerregistry's remote.Write (and Pusher, WriteIndex, Put) treats
// every manifest with a subject as a referrer: on a registry without the
// referrers API it reads the tag sha256-<subject hex> and writes an index
// there. A referrer pushed that way moves a tag before the release's
// tags, and on GitLab (which resolves that tag to the subject itself)
// fails. This test pins the behaviour the publishing code has to avoid
// (PUT the raw manifest itself), so an upgrade that changes it is
// noticed; an attestation manifest, which has no subject, moves no tag.
func TestRemoteWriteOfASubjectTagsTheFallback(t *testing.T) {
	repo, subject := pushPlatform(t, testkit.Registry(t))
	_, sbom, prov := statements(t)
	art, err := AttestationManifest(subject, sbom, prov)
	require.NoError(t, err)
	require.NoError(t, remote.Write(repo.Digest(mustDigest(t, art).String()), art))
	tags, err := remote.List(repo)
	require.NoError(t, err)
	assert.Equal(t, []string{"v1"}, tags, "an attestation manifest names no subject")

	ref, err := StatementReferrer(subject, prov)
	require.NoError(t, err)
	require.NoError(t, remote.Write(repo.Digest(mustDigest(t, ref).String()), ref))
	tags, err = remote.List(repo)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"v1", "sha256-" + subject.Digest.Hex}, tags)
}

func TestArtifactBadInput(t *testing.T) {
	_, sbom, _ := statements(t)
	subject := testImage(t, linuxV7).Manifest
	_, err := AttestationManifest(subject)
	assert.ErrorContains(t, err, "no statements")
	_, err = AttestationManifest(subject, Statement{})
	assert.ErrorContains(t, err, "statement 0 is empty")
	_, err = AttestationManifest(v1.Descriptor{Digest: subject.Digest}, sbom)
	assert.ErrorContains(t, err, "want a media type, digest and size")
	_, err = StatementReferrer(subject, Statement{PredicateType: attestspec.PredicateSPDX})
	assert.ErrorContains(t, err, "empty statement")
	_, err = SPDXReferrer(subject, nil)
	assert.ErrorContains(t, err, "empty document")
}
