//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	buildTypeRelease = "https://github.com/helperbuild/helperbuild/buildtypes/release/v1"
	buildTypeJoin    = "https://github.com/helperbuild/helperbuild/buildtypes/index/v1"
)

// slsaPredicate is what these tests read of a SLSA v1 predicate.
type slsaPredicate struct {
	BuildDefinition struct {
		BuildType          string `json:"buildType"`
		InternalParameters struct {
			GoVersion string `json:"goVersion"`
		} `json:"internalParameters"`
	} `json:"buildDefinition"`
}

// TestIndexKeepsReferrers: an image pushed with --attest referrers keeps
// every SBOM and provenance when index joins it into another repository
// and into another registry (the TLS one): verify --attestations passes
// on each target, which lists the source's referrers as its own.
func TestIndexKeepsReferrers(t *testing.T) {
	s := suiteFor(t)
	base := s.plain.ref(baseRepo + ":" + baseTag)
	home := regctlHome(t, s.plain.Host)
	env := s.helperbuildEnv(t)
	dir := s.exampleDir(t)

	var src pushedImage
	s.mustStep(t, "push --attest referrers", func(t *testing.T) {
		src = s.configFreePush(t, s.plain, base, "e2e/ref/app", exampleVersion, env, "--attest", "referrers")
	})
	verifyAttestations := func(t *testing.T, env []string, ref string) {
		t.Helper()
		res := s.helperbuild(t, dir, env, "verify", "--attestations", "--platforms", platformList(targets), ref)
		assert.Zero(t, res.ExitCode, "verify --attestations %s:\n%s", ref, res)
	}

	s.step(t, "into another repository: the referrers copied, one attestation manifest each, verify passes", func(t *testing.T) {
		target := s.plain.ref("e2e/other/app:v1")
		res := s.mustHelperbuild(t, dir, env, "index", "--tag", target, src.ref())
		assert.Equal(t, len(targets), strings.Count(res.Stdout, "; carried: 0 attestation manifests, 3 referrers\n"), "the summary's sources:\n%s", res.Stdout)
		for _, p := range src.Meta.Platforms {
			assertReferrers(t, home, s.plain.ref("e2e/other/app@"+p.Digest), p.Attestations.Referrers)
		}
		raw, _ := inspectRaw(t, s.plain, target)
		assert.Len(t, runnable(t, parseIndex(t, raw)).Manifests, len(targets))
		verifyAttestations(t, env, target)
	})

	s.step(t, "into another repository with --attest referrers: the join's provenance beside the build's, verify passes", func(t *testing.T) {
		target := s.plain.ref("e2e/other/app-referrers:v1")
		s.mustHelperbuild(t, dir, env, "index", "--attest", "referrers", "--tag", target, src.ref())
		raw, _ := inspectRaw(t, s.plain, target)
		assert.Len(t, parseIndex(t, raw).Manifests, len(targets), "the index lists the images alone")
		verifyAttestations(t, env, target)
	})

	tlsEnv := s.helperbuildEnv(t, "DOCKER_CONFIG="+dockerConfigDir(t, s.secure.Host, s.secure.User, s.secure.Password))
	for _, mode := range []string{"index", "none"} {
		s.step(t, "into the TLS registry, --attest "+mode+": the referrers copied, verify passes", func(t *testing.T) {
			repo := "e2e/copied-" + mode + "/app"
			target := s.secure.ref(repo + ":v1")
			s.mustHelperbuild(t, dir, tlsEnv, "index", "--attest", mode, "--tag", target, src.ref())
			tags := listTags(t, s.secure, repo)
			for _, p := range src.Meta.Platforms {
				d, err := v1.NewHash(p.Digest)
				require.NoError(t, err)
				assert.Contains(t, tags, "sha256-"+d.Hex, "the fallback tag listing the copies about %s", p.Platform)
			}
			// With none, the index holds no attestation: verify reads the copies alone.
			verifyAttestations(t, tlsEnv, target)
		})
	}
}

// TestIndexBuildProvenanceVisible: after index, buildx imagetools, skopeo
// and regctl show each platform's build provenance (commit, Go version),
// whether the source kept it in its index or as referrers: each platform
// has one attestation manifest, the build's provenance its first SLSA
// statement, the join's its last.
func TestIndexBuildProvenanceVisible(t *testing.T) {
	s := suiteFor(t)
	base := s.plain.ref(baseRepo + ":" + baseTag)
	home := regctlHome(t, s.plain.Host)
	env := s.helperbuildEnv(t)
	dir := s.exampleDir(t)

	var sources [2]string
	s.mustStep(t, "sources: attestations in the index, and as referrers", func(t *testing.T) {
		sources[0] = s.plainHelper(t).ref()
		sources[1] = s.configFreePush(t, s.plain, base, "e2e/visible-src/app", exampleVersion, env, "--attest", "referrers").ref()
	})
	for i, from := range []string{"index", "referrers"} {
		target := s.plain.ref("e2e/visible-" + from + "/app:v1")
		s.mustStep(t, "index of the source with attestations in its "+from, func(t *testing.T) {
			s.mustHelperbuild(t, dir, env, "index", "--tag", target, sources[i])
		})
		s.step(t, "buildx imagetools inspect shows the build's provenance/"+from, func(t *testing.T) {
			res := run(t, command(t, append(os.Environ(), "DOCKER_CONFIG="+t.TempDir()), "buildx", "imagetools", "inspect",
				"--format", "{{json .Provenance}}", target))
			require.Zero(t, res.ExitCode, "buildx imagetools inspect:\n%s", res)
			var per map[string]struct{ SLSA slsaPredicate }
			require.NoError(t, json.Unmarshal([]byte(res.Stdout), &per), "%s", res.Stdout)
			for _, tg := range targets {
				got := per[tg.Platform].SLSA.BuildDefinition
				assert.Equal(t, buildTypeRelease, got.BuildType, "buildx's provenance of %s:\n%s", tg.Platform, res.Stdout)
				assert.True(t, strings.HasPrefix(got.InternalParameters.GoVersion, "go1."), "the Go version: %q", got.InternalParameters.GoVersion)
			}
		})
		s.step(t, "skopeo and regctl read one attestation manifest per platform, the build's provenance first/"+from, func(t *testing.T) {
			raw, _ := inspectRaw(t, s.plain, target)
			index := parseIndex(t, raw)
			require.Len(t, index.Manifests, 2*len(targets), "one attestation manifest per platform")
			repo, _, _ := strings.Cut(target, ":v1")
			for _, att := range index.Manifests[len(targets):] {
				require.Equal(t, "attestation-manifest", att.Annotations["vnd.docker.reference.type"])
				araw, _ := inspectRaw(t, s.plain, repo+"@"+att.Digest.String())
				var m v1.Manifest
				require.NoError(t, json.Unmarshal(araw, &m))
				var predicates, buildTypes []string
				for _, l := range m.Layers {
					p := l.Annotations["in-toto.io/predicate-type"]
					predicates = append(predicates, p)
					if p != predicateSLSA {
						continue
					}
					var st struct{ Predicate slsaPredicate }
					require.NoError(t, json.Unmarshal([]byte(regctl(t, home, "blob", "get", repo, l.Digest.String())), &st))
					buildTypes = append(buildTypes, st.Predicate.BuildDefinition.BuildType)
				}
				assert.Equal(t, []string{predicateSPDX, predicateSLSA, predicateSLSA}, predicates, "skopeo inspect --raw %s", att.Digest)
				assert.Equal(t, []string{buildTypeRelease, buildTypeJoin}, buildTypes, "regctl blob get: the build's, then the join's")
			}
		})
	}
}

// TestIndexCarriesSignatures: cosign signatures (Sigstore bundles and the
// legacy payload as referrers, and legacy .sig tags) are over the platform
// manifest's digest, which index keeps: copied into another repository,
// cosign verify accepts them there; index --sign in the legacy form adds
// its signature to the copied .sig tag.
func TestIndexCarriesSignatures(t *testing.T) {
	s := suiteFor(t)
	base := s.plain.ref(baseRepo + ":" + baseTag)
	keys := t.TempDir()
	const password = "e2e-secret"
	s.mustStep(t, "cosign generate-key-pair", func(t *testing.T) {
		res := cosign(t, keys, password, "generate-key-pair")
		require.Zero(t, res.ExitCode, "%s", res)
	})
	key, pub := filepath.Join(keys, "cosign.key"), filepath.Join(keys, "cosign.pub")
	env := s.helperbuildEnv(t, "COSIGN_PASSWORD="+password)
	for _, format := range []string{"bundle", "legacy-referrer", "legacy"} {
		s.step(t, "push --sign-format "+format+", index into another repository: cosign verify accepts each platform there", func(t *testing.T) {
			src := s.configFreePush(t, s.plain, base, "e2e/signed-src-"+format+"/app", exampleVersion, env,
				"--attest", "referrers", "--sign", "--sign-key", key, "--sign-format", format, "--sign-tlog", "none")
			target := "e2e/signed-copy-" + format + "/app"
			s.mustHelperbuild(t, s.exampleDir(t), env, "index", "--tag", s.plain.ref(target+":v1"), src.ref())
			args := []string{"verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", "--allow-insecure-registry"}
			if format == "legacy-referrer" {
				args = append(args, "--experimental-oci11")
			}
			for _, p := range src.Meta.Platforms {
				res := cosign(t, keys, password, append(args, s.plain.ref(target+"@"+p.Digest))...)
				assert.Zero(t, res.ExitCode, "cosign verify %s in %s:\n%s", p.Platform, target, res)
			}
			if format != "legacy" {
				return
			}
			// index --sign in the legacy form adds to the copied .sig tags: both keys verify.
			other := t.TempDir()
			require.Zero(t, cosign(t, other, password, "generate-key-pair").ExitCode)
			resigned := "e2e/signed-resigned/app"
			s.mustHelperbuild(t, s.exampleDir(t), env, "index", "--sign", "--sign-key", filepath.Join(other, "cosign.key"), "--sign-format", "legacy",
				"--sign-tlog", "none", "--tag", s.plain.ref(resigned+":v1"), src.ref())
			for _, p := range src.Meta.Platforms {
				for _, k := range []string{pub, filepath.Join(other, "cosign.pub")} {
					res := cosign(t, keys, password, append([]string{"verify", "--key", k, "--insecure-ignore-tlog=true", "--allow-http-registry",
						"--allow-insecure-registry"}, s.plain.ref(resigned+"@"+p.Digest))...)
					assert.Zero(t, res.ExitCode, "cosign verify --key %s %s:\n%s", k, p.Platform, res)
				}
			}
		})
	}
}
