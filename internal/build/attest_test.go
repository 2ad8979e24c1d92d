package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// alpineLike is a multi-arch base whose layer holds an os-release and an
// apk database, in an in-process registry.
func alpineLike(t *testing.T, archs ...string) string {
	t.Helper()
	host := testkit.Registry(t)
	ref := host + "/base/alpine:3"
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(r, alpineIndex(t, archs...)))
	return ref
}

// alpineIndex is alpineLike's index.
func alpineIndex(t *testing.T, archs ...string) v1.ImageIndex {
	t.Helper()
	return alpineIndexWith(t, nil, archs...)
}

// alpineIndexWith is alpineIndex with extra entries in each layer.
func alpineIndexWith(t *testing.T, extra []tartest.Entry, archs ...string) v1.ImageIndex {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	for _, a := range archs {
		p, err := platform.Parse(a)
		require.NoError(t, err)
		entries := append([]tartest.Entry{
			tartest.Dir("etc/", 0o755),
			tartest.Symlink("etc/os-release", "../usr/lib/os-release"),
			tartest.File("usr/lib/os-release", 0o644, []byte("ID=alpine\nVERSION_ID=3.20.3\n")),
			tartest.File("lib/apk/db/installed", 0o644, []byte("P:musl\nV:1.2.5-r0\nA:"+p.Architecture+"\nL:MIT\no:musl\n\n")),
			tartest.Dir("usr/bin/", 0o755),
		}, extra...)
		b := tartest.Bytes(t, entries...)
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
		require.NoError(t, err)
		img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant, RootFS: v1.RootFS{Type: "layers"}})
		require.NoError(t, err)
		img, err = mutate.AppendLayers(img, l)
		require.NoError(t, err)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx
}

func attestPlan(t *testing.T, base string) *recipe.Plan {
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base,
		Platforms: platforms(t, "linux/amd64,linux/arm64"), Ldflags: "-X main.version=v1.2.3", Tags: []string{"v1.2.3"}})
	require.NoError(t, err)
	return plan
}

func attestOptions(t *testing.T, mode product.AttestMode) Options {
	o := options(t)
	o.Meta.Revision = strings.Repeat("ab", 20)
	o.Attest = Attest{Mode: mode, HelperbuildVersion: "v0.0.0-test", Source: attest.Source{URL: "https://gitlab.example.com/g/p", Ref: "refs/tags/v1.2.3", Commit: o.Meta.Revision}}
	return o
}

func TestBuildAttestsInTheIndex(t *testing.T) {
	base := alpineLike(t, "linux/amd64", "linux/arm64")
	res, err := Build(context.Background(), attestPlan(t, base), attestOptions(t, product.AttestIndex))
	require.NoError(t, err)
	img := res.Images[0]
	require.NoError(t, validate.Index(img.Index))

	im, err := img.Index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 4, "two platform images, then their two attestation manifests")
	for k, p := range img.Platforms {
		entry, att := im.Manifests[k], im.Manifests[2+k]
		assert.Equal(t, p.Digest, entry.Digest, "platform images first, in platform order")
		assert.Empty(t, entry.ArtifactType, "a plain image entry has no artifactType")
		assert.Equal(t, "unknown", att.Platform.OS)
		assert.Equal(t, "attestation-manifest", att.Annotations[attestspec.AnnotationReferenceType])
		assert.Equal(t, p.Digest.String(), att.Annotations[attestspec.AnnotationReferenceDigest])
		assert.Empty(t, att.ArtifactType)
		require.NotNil(t, p.Attestation)
		assert.Equal(t, p.Attestation.Manifest.IndexEntry().Digest, att.Digest)

		child, err := img.Index.Image(att.Digest)
		require.NoError(t, err)
		m, err := child.Manifest()
		require.NoError(t, err)
		assert.Nil(t, m.Subject, "BuildKit's default form: the index entry ties it to its image")
		// A merge names the statements from the manifest alone, by each
		// layer's predicate type (release's mergedAttestation).
		byPredicate := map[string]v1.Hash{}
		for _, l := range m.Layers {
			byPredicate[l.Annotations[attestspec.AnnotationPredicateType]] = l.Digest
		}
		assert.Equal(t, p.Attestation.Digests, product.AttestationDigests{Manifest: att.Digest,
			SBOM: byPredicate[attestspec.PredicateSPDX], Provenance: byPredicate[attestspec.PredicateSLSA]},
			"a merge names the same statements, from the manifest alone")
		assert.Equal(t, p.Attestation.SBOM.Digest(), p.Attestation.Digests.SBOM)
		require.Len(t, m.Layers, 2)

		// The SBOM: the binary's modules, the base's apk package.
		var sbom struct {
			Subject   []struct{ Digest map[string]string } `json:"subject"`
			Predicate struct {
				Packages []struct {
					Name, VersionInfo string
				} `json:"packages"`
			} `json:"predicate"`
		}
		require.NoError(t, json.Unmarshal(p.Attestation.SBOM.JSON, &sbom))
		assert.Equal(t, p.Digest.Hex, sbom.Subject[0].Digest["sha256"])
		var names []string
		for _, pk := range sbom.Predicate.Packages {
			names = append(names, pk.Name)
		}
		assert.Contains(t, names, "musl", "the base's apk database")
		assert.Contains(t, names, "example.com/hello/cmd/hello", "the binary")
		assert.Contains(t, names, "stdlib")

		// The provenance: the base's digest is the manifest's annotation.
		child, err = img.Index.Image(p.Digest)
		require.NoError(t, err)
		pm, err := child.Manifest()
		require.NoError(t, err)
		assert.Contains(t, string(p.Attestation.Provenance.JSON), strings.TrimPrefix(pm.Annotations[specsv1.AnnotationBaseImageDigest], "sha256:"))
		assert.NotContains(t, string(p.Attestation.Provenance.JSON), "startedOn", "min holds nothing run-specific")
	}

	// The same inputs again, elsewhere: the same index, attestations included.
	again, err := Build(context.Background(), attestPlan(t, base), attestOptions(t, product.AttestIndex))
	require.NoError(t, err)
	assert.Equal(t, img.Digest, again.Images[0].Digest)
}

func TestBuildAttestsAsReferrers(t *testing.T) {
	base := alpineLike(t, "linux/amd64", "linux/arm64")
	res, err := Build(context.Background(), attestPlan(t, base), attestOptions(t, product.AttestReferrers))
	require.NoError(t, err)
	img := res.Images[0]
	im, err := img.Index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2, "referrers stay out of the index")
	for _, p := range img.Platforms {
		require.NotNil(t, p.Attestation)
		assert.Nil(t, p.Attestation.Manifest)
		require.Len(t, p.Attestation.Referrers, 3)
		var types []string
		for _, r := range p.Attestation.Referrers {
			m, err := r.Manifest()
			require.NoError(t, err)
			assert.Equal(t, p.Digest, m.Subject.Digest)
			types = append(types, r.IndexEntry().ArtifactType)
		}
		assert.Equal(t, []string{attestspec.MediaTypeInToto, attestspec.MediaTypeInToto, attestspec.MediaTypeSPDX}, types)
	}

	// Without attestations the index is the plain one.
	plain, err := Build(context.Background(), attestPlan(t, base), options(t))
	require.NoError(t, err)
	assert.Nil(t, plain.Images[0].Platforms[0].Attestation)
}

func TestBuildProvenanceMaxRecordsTheRun(t *testing.T) {
	base := alpineLike(t, "linux/amd64")
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base, Platforms: platforms(t, "linux/amd64")})
	require.NoError(t, err)
	run := func(at time.Time) *product.Result {
		o := attestOptions(t, product.AttestIndex)
		o.Attest.Provenance = attest.ProvenanceMax
		o.Attest.CI = attest.CI{ServerURL: "https://gitlab.example.com", ProjectPath: "g/p", JobURL: "https://gitlab.example.com/g/p/-/jobs/7"}
		o.Attest.Now = func() time.Time { return at }
		res, err := Build(context.Background(), plan, o)
		require.NoError(t, err)
		return res
	}
	first := run(time.Unix(1800000000, 0))
	prov := string(first.Images[0].Platforms[0].Attestation.Provenance.JSON)
	assert.Contains(t, prov, `"startedOn":"2027-01-15T08:00:00Z"`)
	assert.Contains(t, prov, `"invocationId":"https://gitlab.example.com/g/p/-/jobs/7"`)
	second := run(time.Unix(1800000060, 0))
	assert.NotEqual(t, first.Images[0].Digest, second.Images[0].Digest, "max: another run, another index digest")
	assert.Equal(t, first.Images[0].Platforms[0].Digest, second.Images[0].Platforms[0].Digest, "the image itself is the same")
}

// TestAttestedLayoutBaseIsPortable: the same build on a base from an OCI
// layout in two directories gives the same index, attestations included:
// the base is recorded by the layout's ref name, never by its path.
func TestAttestedLayoutBaseIsPortable(t *testing.T) {
	idx := alpineIndex(t, "linux/amd64", "linux/arm64")
	var digests []v1.Hash
	for range 2 {
		dir := filepath.Join(t.TempDir(), "somewhere", "base-layout")
		lp, err := layout.Write(dir, empty.Index)
		require.NoError(t, err)
		require.NoError(t, lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{specsv1.AnnotationRefName: "alpine:3"})))
		res, err := Build(context.Background(), attestPlan(t, "oci:"+dir+":alpine:3"), attestOptions(t, product.AttestIndex))
		require.NoError(t, err)
		img := res.Images[0]
		digests = append(digests, img.Digest)
		assert.Equal(t, "alpine:3", img.BaseName, "the layout's ref name, as org.opencontainers.image.base.name")
		for _, p := range img.Platforms {
			for _, doc := range [][]byte{p.Attestation.SBOM.JSON, p.Attestation.Provenance.JSON} {
				assert.NotContains(t, string(doc), dir, "no host path")
				assert.NotContains(t, string(doc), "oci:", "no layout reference")
			}
			assert.Contains(t, string(p.Attestation.Provenance.JSON), `"uri":"pkg:oci/alpine@sha256:`)
			assert.Contains(t, string(p.Attestation.Provenance.JSON), `"name":"alpine:3"}`)
		}
	}
	assert.Equal(t, digests[0], digests[1])
}

// A Go binary of the base is in the SBOM with its modules, contained in
// the base package, unless the image's own layer writes its path.
func TestBuildListsBaseGoBinaries(t *testing.T) {
	dir := module(t)
	bin := filepath.Join(t.TempDir(), "lfs")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/hello")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lfs, err := os.ReadFile(bin)
	require.NoError(t, err)

	host := testkit.Registry(t)
	base := host + "/base/alpine-lfs:3"
	r, err := name.ParseReference(base)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(r, alpineIndexWith(t, []tartest.Entry{
		tartest.File("usr/bin/git-lfs", 0o755, lfs),
		tartest.File("usr/bin/hello", 0o755, lfs), // the image's binary replaces it
	}, "linux/amd64", "linux/arm64")))

	res, err := Build(context.Background(), attestPlan(t, base), attestOptions(t, product.AttestIndex))
	require.NoError(t, err)
	for _, p := range res.Images[0].Platforms {
		var doc struct {
			Predicate struct {
				Packages []struct {
					SPDXID, Name, PackageFileName, PrimaryPackagePurpose string
				} `json:"packages"`
				Relationships []struct {
					From string `json:"spdxElementId"`
					Type string `json:"relationshipType"`
					To   string `json:"relatedSpdxElement"`
				} `json:"relationships"`
			} `json:"predicate"`
		}
		require.NoError(t, json.Unmarshal(p.Attestation.SBOM.JSON, &doc))
		apps := map[string]string{} // packageFileName -> SPDXID
		var baseID string
		for _, pk := range doc.Predicate.Packages {
			if pk.PrimaryPackagePurpose == "APPLICATION" {
				apps[pk.PackageFileName] = pk.SPDXID
			}
			if pk.Name == base {
				baseID = pk.SPDXID
			}
		}
		require.Contains(t, apps, "/usr/bin/git-lfs", "the base's Go binary")
		require.NotEmpty(t, baseID)
		contained := map[string]string{} // SPDXID -> container
		for _, rel := range doc.Predicate.Relationships {
			if rel.Type == "CONTAINS" {
				contained[rel.To] = rel.From
			}
		}
		assert.Equal(t, baseID, contained[apps["/usr/bin/git-lfs"]], "contained in the base package")
		assert.Len(t, apps, 2, "git-lfs and the image's own binary, not the base's binary it replaced: %v", apps)
		for path, id := range apps {
			if path != "/usr/bin/git-lfs" {
				assert.NotEqual(t, baseID, contained[id], "%s is the image's own", path)
			}
		}
	}
}

// TestAttestCompleteBesideTheCompiles: what the attestations learn of the
// checkout late (Attest.Complete, git's answers) is asked while the go
// builds run, reaches the provenance, and its failure fails the run with
// its own error before anything of the compiles shows.
func TestAttestCompleteBesideTheCompiles(t *testing.T) {
	base := alpineLike(t, "linux/amd64")
	realGo, err := exec.LookPath("go")
	require.NoError(t, err)
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: base, Platforms: platforms(t, "linux/amd64")})
	require.NoError(t, err)

	goCmd, started := fakeGo(t, `exec "`+realGo+`" "$@"`)
	o := attestOptions(t, product.AttestIndex)
	o.Go = goCmd
	o.Attest.Source = attest.Source{}
	o.Attest.Complete = func(ctx context.Context, a *Attest) error {
		select {
		case <-started:
		case <-time.After(2 * time.Minute): // a bound, not a measurement
			return errors.New("no go build started beside Complete")
		}
		a.Source = attest.Source{URL: "https://gitlab.example.com/g/late", Ref: "refs/tags/v9.9.9", Commit: o.Meta.Revision}
		return nil
	}
	res, err := Build(context.Background(), plan, o)
	require.NoError(t, err)
	prov := string(res.Images[0].Platforms[0].Attestation.Provenance.JSON)
	assert.Contains(t, prov, `"uri":"git+https://gitlab.example.com/g/late@refs/tags/v9.9.9"`, "the source Complete found")

	goCmd, started = fakeGo(t, "exec sleep 600")
	o = attestOptions(t, product.AttestIndex)
	o.Go = goCmd
	var events recorded
	o.Progress = &events
	o.Attest.Complete = func(ctx context.Context, a *Attest) error {
		<-started
		return errors.New("git: no checkout here")
	}
	_, err = Build(context.Background(), plan, o)
	require.EqualError(t, err, "git: no checkout here")
	for _, e := range events.all() {
		assert.NotEqual(t, progress.Compiling, e.Stage, "a compile showed: %+v", e)
		assert.NotEqual(t, "compiled", e.Kind, "a compile showed: %+v", e)
	}
}
