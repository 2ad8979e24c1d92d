//go:build e2e

package e2e

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

const (
	predicateSPDX = "https://spdx.dev/Document"
	predicateSLSA = "https://slsa.dev/provenance/v1"
)

// regctl runs regctl with a configuration of its own (plain HTTP for the
// given hosts) and returns its stdout.
func regctl(t *testing.T, home string, args ...string) string {
	t.Helper()
	env := append(os.Environ(), "HOME="+home)
	return mustRun(t, command(t, env, append([]string{"regctl"}, args...)...)).Stdout
}

// regctlHome is a regctl configuration reaching hosts over plain HTTP.
func regctlHome(t *testing.T, hosts ...string) string {
	t.Helper()
	home := t.TempDir()
	for _, h := range hosts {
		regctl(t, home, "registry", "set", h, "--tls", "disabled")
	}
	return home
}

// statements reads the in-toto statements of the manifest at ref with
// go-containerregistry, by predicate type, checking each is about subject.
func statements(t *testing.T, ref name.Digest, subject v1.Hash) map[string][]byte {
	t.Helper()
	img, err := remote.Image(ref)
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, l := range m.Layers {
		if l.MediaType != "application/vnd.in-toto+json" {
			continue
		}
		layer, err := img.LayerByDigest(l.Digest)
		require.NoError(t, err)
		rc, err := layer.Compressed()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		var st struct {
			PredicateType string `json:"predicateType"`
			Subject       []struct {
				Digest map[string]string `json:"digest"`
			} `json:"subject"`
		}
		require.NoError(t, json.Unmarshal(data, &st))
		assert.Equal(t, subject.Hex, st.Subject[0].Digest["sha256"], "the statement is about its platform manifest")
		assert.Equal(t, st.PredicateType, l.Annotations["in-toto.io/predicate-type"])
		out[st.PredicateType] = data
	}
	return out
}

// TestAttestIndex: the default push lists one attestation manifest per
// platform after the platform images (BuildKit's layout), moves no tag
// but the release's, and regctl, go-containerregistry and verify
// --attestations read it back.
func TestAttestIndex(t *testing.T) {
	s := suiteFor(t)
	img := s.plainHelper(t)
	home := regctlHome(t, s.plain.Host)

	var index v1.IndexManifest
	s.mustStep(t, "regctl reads the index: five platforms, then their five attestation manifests", func(t *testing.T) {
		raw := regctl(t, home, "manifest", "get", img.ref(), "--format", "raw-body")
		require.NoError(t, json.Unmarshal([]byte(raw), &index))
		require.Len(t, index.Manifests, 2*len(targets))
		for k, tg := range targets {
			entry, att := index.Manifests[k], index.Manifests[len(targets)+k]
			assert.Equal(t, tg.Platform, platformOf(entry))
			assert.Empty(t, entry.ArtifactType, "a platform entry has no artifactType")
			assert.Equal(t, "unknown/unknown", platformOf(att))
			assert.Equal(t, "attestation-manifest", att.Annotations["vnd.docker.reference.type"])
			assert.Equal(t, entry.Digest.String(), att.Annotations["vnd.docker.reference.digest"])
			assert.Equal(t, entry.Digest.String(), img.Meta.Platforms[k].Digest)
			require.NotNil(t, img.Meta.Platforms[k].Attestations)
			assert.Equal(t, att.Digest.String(), img.Meta.Platforms[k].Attestations.Manifest, "--metadata-file names the attestation manifest")
		}
	})

	s.step(t, "each attestation manifest: BuildKit's default form, which skopeo and regctl inspect; SBOM and provenance about its platform", func(t *testing.T) {
		for k := range targets {
			entry, att := index.Manifests[k], index.Manifests[len(targets)+k]
			attRef := img.Registry.ref(img.Repo + "@" + att.Digest.String())
			raw := regctl(t, home, "manifest", "get", attRef, "--format", "raw-body")
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(raw), &m))
			assert.NotContains(t, m, "artifactType")
			assert.NotContains(t, m, "subject", "index mode writes no referrer")
			var cfg v1.Descriptor
			require.NoError(t, json.Unmarshal(m["config"], &cfg))
			assert.Equal(t, "application/vnd.oci.image.config.v1+json", string(cfg.MediaType))

			// The two readers that refused the OCI artifact form.
			res := run(t, command(t, nil, append(append([]string{"skopeo", "inspect"}, img.Registry.skopeoFlags("")...), "docker://"+attRef)...))
			require.Zero(t, res.ExitCode, "skopeo inspect %s:\n%s", attRef, res)
			var si struct {
				Os, Architecture string
				Layers           []string
			}
			require.NoError(t, json.Unmarshal([]byte(res.Stdout), &si))
			assert.Equal(t, "unknown/unknown", si.Os+"/"+si.Architecture, "skopeo inspect reads its config")
			assert.Len(t, si.Layers, 2, "skopeo inspect lists the two statements")
			ri := regctl(t, home, "image", "inspect", attRef, "--format", "{{.OS}}/{{.Architecture}}")
			assert.Equal(t, "unknown/unknown", strings.TrimSpace(ri), "regctl image inspect reads its config")

			ref, err := name.NewDigest(img.Registry.ref(img.Repo + "@" + att.Digest.String()))
			require.NoError(t, err)
			st := statements(t, ref, entry.Digest)
			assert.Contains(t, st, predicateSPDX)
			assert.Contains(t, st, predicateSLSA)
			assert.Contains(t, string(st[predicateSPDX]), "pkg:golang/stdlib@")
			assert.Contains(t, string(st[predicateSPDX]), `"name":"busybox-static"`, "the base's dpkg package")
			assert.Contains(t, string(st[predicateSPDX]), "pkg:deb/debian/busybox-static@", "its purl")
			assert.Contains(t, string(st[predicateSPDX]), "DESCENDANT_OF", "the base")
			assert.NotContains(t, string(st[predicateSLSA]), "startedOn", "min: nothing run-specific")
		}
	})

	s.step(t, "buildx imagetools inspect shows each platform's SBOM and provenance", func(t *testing.T) {
		for _, f := range []struct{ field, want string }{{"SBOM", `"spdxVersion":"SPDX-2.3"`}, {"Provenance", `"buildDefinition"`}} {
			res := run(t, command(t, append(os.Environ(), "DOCKER_CONFIG="+t.TempDir()), "buildx", "imagetools", "inspect",
				"--format", "{{json ."+f.field+"}}", img.ref()))
			require.Zero(t, res.ExitCode, "buildx imagetools inspect:\n%s", res)
			var per map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(res.Stdout), &per), "%s", res.Stdout)
			for _, tg := range targets {
				got := string(per[tg.Platform])
				assert.Contains(t, strings.ReplaceAll(got, " ", ""), f.want, "buildx's %s of %s", f.field, tg.Platform)
			}
		}
	})

	s.step(t, "no tag but the release's: no sha256-<hex> fallback tag", func(t *testing.T) {
		for _, tag := range listTags(t, s.plain, img.Repo) {
			assert.False(t, strings.HasPrefix(tag, "sha256-"), tag)
		}
	})

	s.step(t, "helperbuild verify --attestations passes", func(t *testing.T) {
		res := s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "verify", "--attestations",
			"--platforms", platformList(targets), img.ref())
		assert.Zero(t, res.ExitCode, "verify:\n%s", res)
	})
}

// TestAttestReferrers: --attest referrers on docker-registry (no
// referrers API) writes each platform's fallback tag, on a registry with
// the API none, and on one that resolves sha256-<hex> to the subject
// (GitLab's behaviour, an in-process proxy in front of docker-registry)
// it is refused before any tag moves.
func TestAttestReferrers(t *testing.T) {
	s := suiteFor(t)
	base := s.plain.ref(baseRepo + ":" + baseTag)
	api := testkit.ReferrersRegistry(t)
	gitlab := resolvingProxy(t, s.plain)
	home := regctlHome(t, s.plain.Host, api, gitlab)

	var pushed pushedImage
	s.mustStep(t, "push --attest referrers to docker-registry", func(t *testing.T) {
		pushed = s.configFreePush(t, s.plain, base, "e2e/attest-referrers", exampleVersion, s.helperbuildEnv(t), "--attest", "referrers")
		raw, _ := inspectRaw(t, s.plain, pushed.ref())
		assert.Len(t, parseIndex(t, raw).Manifests, len(targets), "the index holds the platform images only")
	})

	s.step(t, "regctl artifact list: SBOM, provenance and the SPDX document behind each fallback tag", func(t *testing.T) {
		tags := listTags(t, s.plain, pushed.Repo)
		for _, p := range pushed.Meta.Platforms {
			d, err := v1.NewHash(p.Digest)
			require.NoError(t, err)
			assert.Contains(t, tags, "sha256-"+d.Hex, "the fallback tag of %s", p.Platform)
			assertReferrers(t, home, s.plain.ref(pushed.Repo+"@"+p.Digest), p.Attestations.Referrers)
			ref, err := name.NewDigest(s.plain.ref(pushed.Repo + "@" + p.Digest))
			require.NoError(t, err)
			idx, err := remote.Referrers(ref)
			require.NoError(t, err)
			im, err := idx.IndexManifest()
			require.NoError(t, err)
			assert.Len(t, im.Manifests, 3, "go-containerregistry reads the fallback tag too")
		}
		spdx := regctl(t, home, "artifact", "get", "--subject", s.plain.ref(pushed.Repo+"@"+pushed.Meta.Platforms[0].Digest),
			"--filter-artifact-type", "application/spdx+json")
		assert.Contains(t, spdx, `"spdxVersion":"SPDX-2.3"`, "the plain SPDX document trivy's --sbom-sources oci reads")
	})

	s.step(t, "helperbuild verify --attestations reads the referrers", func(t *testing.T) {
		res := s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "verify", "--attestations",
			"--platforms", platformList(targets), pushed.ref())
		assert.Zero(t, res.ExitCode, "verify:\n%s", res)
	})

	s.step(t, "a registry with the referrers API lists them itself: no fallback tag", func(t *testing.T) {
		img := s.configFreePush(t, &registry{Host: api}, base, "e2e/attest-api", exampleVersion, s.helperbuildEnv(t),
			"--attest", "referrers", "--insecure-registry", api)
		assert.Equal(t, []string{exampleVersion}, regctlTags(t, home, api+"/e2e/attest-api"))
		for _, p := range img.Meta.Platforms {
			assertReferrers(t, home, api+"/e2e/attest-api@"+p.Digest, p.Attestations.Referrers)
		}
	})

	s.step(t, "a registry resolving sha256-<hex> to the subject is refused, naming it", func(t *testing.T) {
		res := s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "push", "--platforms", platformList(targets),
			"--base", base, "--ldflags", exampleLdflags, "--attest", "referrers", "--insecure-registry", gitlab,
			"--tag", gitlab+"/e2e/attest-gitlab:"+exampleVersion, helperPackage)
		assert.Equal(t, 1, res.ExitCode, "%s", res)
		assert.Contains(t, res.Stderr, "registry "+gitlab+" resolves the tag sha256-")
		assert.Contains(t, res.Stderr, "--attest index")
		res = tryInspectRaw(t, s.plain, s.plain.ref("e2e/attest-gitlab:"+exampleVersion))
		assert.NotZero(t, res.ExitCode, "no tag moved:\n%s", res)
		// Nor any fallback tag: the refusal comes before the tag phase.
		assert.Empty(t, listTags(t, s.plain, "e2e/attest-gitlab"), "tags of the refused push")
	})
}

// assertReferrers checks with regctl that subject's referrers are want:
// two in-toto statements and one SPDX document, by the artifactType of
// the manifests themselves (go-containerregistry's in-process registry
// lists the config media type instead).
func assertReferrers(t *testing.T, home, subject string, want []string) {
	t.Helper()
	var list struct {
		Manifests []v1.Descriptor `json:"manifests"`
	}
	require.NoError(t, json.Unmarshal([]byte(regctl(t, home, "artifact", "list", subject, "--format", "{{json .Manifest}}")), &list))
	repo, _, _ := strings.Cut(subject, "@")
	var got, types []string
	for _, d := range list.Manifests {
		got = append(got, d.Digest.String())
		var m struct {
			ArtifactType string        `json:"artifactType"`
			Subject      v1.Descriptor `json:"subject"`
		}
		require.NoError(t, json.Unmarshal([]byte(regctl(t, home, "manifest", "get", repo+"@"+d.Digest.String(), "--format", "raw-body")), &m))
		types = append(types, m.ArtifactType)
		assert.Equal(t, subject[len(repo)+1:], m.Subject.Digest.String())
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	assert.Equal(t, want, got, "regctl artifact list %s", subject)
	slices.Sort(types)
	assert.Equal(t, []string{"application/spdx+json", "application/vnd.in-toto+json", "application/vnd.in-toto+json"}, types)
}

func regctlTags(t *testing.T, home, repo string) []string {
	t.Helper()
	out := strings.Fields(regctl(t, home, "tag", "ls", repo))
	slices.Sort(out)
	return out
}

// resolvingProxy is an in-process proxy on 127.0.0.1 in front of r that
// reads the tag sha256-<hex> as the manifest sha256:<hex>, as GitLab's
// registry does; it returns its host:port.
func resolvingProxy(t *testing.T, r *registry) string {
	t.Helper()
	target, err := url.Parse(r.baseURL())
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(testkit.ResolvesDigestTags(proxy))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestAttestReproducible: the example's recipe built in two directories
// (the same commit) gives the same index digests, attestations included.
func TestAttestReproducible(t *testing.T) {
	s := suiteFor(t)
	var digests [2]map[string]string
	s.mustStep(t, "two checkouts, two builds", func(t *testing.T) {
		for i := range digests {
			dir := filepath.Join(t.TempDir(), "checkout")
			sh(t, "cp", "-a", s.exampleDir(t), dir)
			md := metadataPath(t)
			// A cache of its own, so the second build writes its layers
			// again rather than taking the first build's.
			s.mustHelperbuild(t, dir, s.helperbuildEnv(t), "build", "--config", e2eConfig,
				"--cache-dir", filepath.Join(t.TempDir(), "cache"),
				"--output", "oci:"+filepath.Join(dir, "out"), "--metadata-file", md)
			digests[i] = map[string]string{}
			for _, img := range readMetadata(t, md).Images {
				digests[i][img.Name] = img.Digest
				for _, p := range img.Platforms {
					require.NotNil(t, p.Attestations, "%s %s is attested", img.Name, p.Platform)
					require.NotEmpty(t, p.Attestations.Manifest)
				}
			}
		}
	})
	s.step(t, "same index digests", func(t *testing.T) {
		require.NotEmpty(t, digests[0])
		assert.Equal(t, digests[0], digests[1])
	})
}
