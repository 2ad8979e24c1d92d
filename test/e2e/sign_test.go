//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// cosignEnv runs the real cosign offline: its TUF fetch fails fast at a
// closed port instead of waiting on the network (registries on loopback
// are reached directly).
func cosignEnv(password string) []string {
	env := []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH"), "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=localhost,127.0.0.1"}
	return append(env, "COSIGN_PASSWORD="+password)
}

func cosign(t *testing.T, dir, password string, args ...string) result {
	t.Helper()
	cmd := command(t, cosignEnv(password), append([]string{"cosign"}, args...)...)
	cmd.Dir = dir
	return run(t, cmd)
}

// TestSignCosignAgrees: signatures helperbuild writes (bundle and legacy)
// verify with the real cosign CLI, and signatures cosign writes verify with
// helperbuild verify --signature; on docker-registry (fallback tags) and on
// a registry with the referrers API.
func TestSignCosignAgrees(t *testing.T) {
	s := suiteFor(t)
	base := s.plain.ref(baseRepo + ":" + baseTag)
	keys := t.TempDir()
	const password = "e2e-secret"
	s.mustStep(t, "cosign generate-key-pair", func(t *testing.T) {
		res := cosign(t, keys, password, "generate-key-pair")
		require.Zero(t, res.ExitCode, "%s", res)
		res = cosign(t, keys, password, "signing-config", "create", "--out", "no-tlog.json")
		require.Zero(t, res.ExitCode, "%s", res)
		// A trusted root naming a log (its key any key), so that both
		// tools refuse a log-less signature for that, not for a TUF fetch.
		logKeys := filepath.Join(keys, "log")
		require.NoError(t, os.Mkdir(logKeys, 0o700))
		require.Zero(t, cosign(t, logKeys, "log", "generate-key-pair").ExitCode)
		res = cosign(t, keys, password, "trusted-root", "create", "--rekor",
			"url=https://rekor.example.test,public-key="+filepath.Join(logKeys, "cosign.pub")+",start-time=2024-01-01T00:00:00Z", "--out", "log-root.json")
		require.Zero(t, res.ExitCode, "%s", res)
	})
	key, pub := filepath.Join(keys, "cosign.key"), filepath.Join(keys, "cosign.pub")
	logRoot := filepath.Join(keys, "log-root.json")
	api := testkit.ReferrersRegistry(t)

	// cosignVerify: cosign verify --key accepts ref's log-less signature
	// with --insecure-ignore-tlog and refuses it without.
	cosignVerify := func(t *testing.T, ref string, extra ...string) {
		t.Helper()
		args := append([]string{"verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", "--allow-insecure-registry"}, extra...)
		res := cosign(t, keys, password, append(args, ref)...)
		assert.Zero(t, res.ExitCode, "cosign verify %s:\n%s", ref, res)
		args = append([]string{"verify", "--key", pub, "--trusted-root", logRoot, "--allow-http-registry", "--allow-insecure-registry"}, extra...)
		res = cosign(t, keys, password, append(args, ref)...)
		assert.NotZero(t, res.ExitCode, "cosign verify without --insecure-ignore-tlog %s:\n%s", ref, res)
		t.Logf("cosign verify without --insecure-ignore-tlog: %s", lastLine(res.Stderr))
	}
	// helperbuildVerify: helperbuild verify --signature --key accepts the
	// log-less signatures of ref with --insecure-ignore-tlog and refuses
	// them without, naming the flag, with and without a trusted root.
	helperbuildVerify := func(t *testing.T, ref string, extra ...string) {
		t.Helper()
		args := append([]string{"verify", "--signature", "--key", pub, "--platforms", platformList(targets)}, extra...)
		res := s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), append(args, "--insecure-ignore-tlog", ref)...)
		assert.Zero(t, res.ExitCode, "%s", res)
		assert.Contains(t, res.Stdout, "SIGNED")
		for _, root := range [][]string{nil, {"--trusted-root", logRoot}} {
			res = s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), append(append(args, root...), ref)...)
			assert.Equal(t, 1, res.ExitCode, "%s", res)
			assert.Equal(t, len(targets)+1, strings.Count(res.Stdout, "no transparency log entry"), "each manifest and the index:\n%s", res.Stdout)
			assert.Contains(t, res.Stdout, "give --insecure-ignore-tlog")
		}
	}
	for _, tc := range []struct {
		format string
		reg    *registry
		extra  []string
	}{
		{"bundle", s.plain, nil},
		{"legacy", s.plain, nil},
		{"bundle", &registry{Host: api}, []string{"--insecure-registry", api}},
		{"legacy-referrer", s.plain, nil},
		{"legacy-referrer", &registry{Host: api}, []string{"--insecure-registry", api}},
	} {
		name := tc.format + " on " + map[bool]string{true: "docker-registry", false: "a registry with the referrers API"}[tc.reg == s.plain]
		s.step(t, "helperbuild push --sign, "+name+": cosign verify accepts every manifest", func(t *testing.T) {
			repo := "e2e/signed-" + tc.format
			extra := append([]string{"--sign", "--sign-key", key, "--sign-format", tc.format, "--sign-tlog", "none"}, tc.extra...)
			img := s.configFreePush(t, tc.reg, base, repo, exampleVersion, s.helperbuildEnv(t, "COSIGN_PASSWORD="+password), extra...)
			// cosign reads the OCI 1.1 form only when told to (it then
			// falls back to the .sig tag, which this release has none of).
			var oci11 []string
			if tc.format == "legacy-referrer" {
				oci11 = []string{"--experimental-oci11"}
				for _, tag := range repoTags(t, tc.reg, repo) {
					assert.False(t, strings.HasSuffix(tag, ".sig"), "no .sig tag: %s", tag)
				}
				assertSignatureReferrers(t, tc.reg, repo, img)
			}
			cosignVerify(t, tc.reg.ref(repo+"@"+img.Digest.String()), oci11...)
			for _, p := range img.Meta.Platforms {
				cosignVerify(t, tc.reg.ref(repo+"@"+p.Digest), oci11...)
			}
			helperbuildVerify(t, img.ref(), "--insecure-registry", tc.reg.Host)
			if tc.format == "legacy" {
				assert.Contains(t, listTags(t, s.plain, repo), "sha256-"+img.Digest.Hex+".sig")
			}
		})
	}

	s.step(t, "helperbuild push --sign-format legacy-referrer where sha256-<hex> resolves to the image (GitLab's): no fallback tag, the .sig tag beside it", func(t *testing.T) {
		gitlab := resolvingProxy(t, s.plain)
		repo := "e2e/signed-gitlab"
		img := s.configFreePush(t, &registry{Host: gitlab}, base, repo, exampleVersion, s.helperbuildEnv(t, "COSIGN_PASSWORD="+password),
			"--sign", "--sign-key", key, "--sign-format", "legacy-referrer", "--sign-tlog", "none", "--insecure-registry", gitlab)
		sigTags := 0
		for _, tag := range listTags(t, s.plain, repo) {
			assert.True(t, tag == exampleVersion || strings.HasSuffix(tag, ".sig"), "no fallback tag: %s", tag)
			if strings.HasSuffix(tag, ".sig") {
				sigTags++
			}
		}
		formats := map[string]int{}
		for _, sg := range img.Meta.Signatures {
			formats[sg.Format]++
		}
		assert.Equal(t, sigTags, formats["legacy"], "one .sig tag per signed manifest")
		assert.Equal(t, formats["legacy"], formats["legacy-referrer"], "each manifest's referrer and .sig image")
		for _, sg := range img.Meta.Signatures {
			if sg.Format == "legacy-referrer" {
				m := inspectManifest(t, s.plain, repo+"@"+sg.Digest)
				assert.Contains(t, m, `"artifactType":"application/vnd.dev.cosign.artifact.sig.v1+json"`, "the referrer is in the registry by digest")
			}
		}
		// Plain cosign verify reads the .sig tag; so does helperbuild verify.
		cosignVerify(t, s.plain.ref(repo+"@"+img.Digest.String()))
		helperbuildVerify(t, img.ref(), "--insecure-registry", gitlab)
	})

	for _, format := range []string{"bundle", "legacy", "legacy-referrer"} {
		s.step(t, "cosign sign --recursive ("+format+"): helperbuild verify --signature accepts it, refuses another key", func(t *testing.T) {
			repo := "e2e/cosign-signed-" + format
			img := s.configFreePush(t, s.plain, base, repo, exampleVersion, s.helperbuildEnv(t))
			// cosign takes a signing config only for bundles; the legacy
			// format is told not to use the log directly.
			noTlog := []string{"--signing-config", "no-tlog.json", "--new-bundle-format=true"}
			if format != "bundle" {
				noTlog = []string{"--use-signing-config=false", "--tlog-upload=false", "--new-bundle-format=false"}
			}
			env := cosignEnv(password)
			if format == "legacy-referrer" {
				// cosign's OCI 1.1 mode is experimental: it wants the variable.
				noTlog = append(noTlog, "--registry-referrers-mode=oci-1-1")
				env = append(env, "COSIGN_EXPERIMENTAL=1")
			}
			args := append([]string{"cosign", "sign", "--key", key, "--recursive", "--yes", "--allow-http-registry", "--allow-insecure-registry"}, noTlog...)
			cmd := command(t, env, append(args, s.plain.ref(repo+"@"+img.Digest.String()))...)
			cmd.Dir = keys
			res := run(t, cmd)
			require.Zero(t, res.ExitCode, "%s", res)
			if format == "legacy-referrer" {
				for _, tag := range listTags(t, s.plain, repo) {
					require.False(t, strings.HasSuffix(tag, ".sig"), "cosign wrote the OCI 1.1 form, no .sig tag: %s", tag)
				}
			}
			helperbuildVerify(t, img.ref())
			var oci11 []string
			if format == "legacy-referrer" {
				oci11 = []string{"--experimental-oci11"}
			}
			cosignVerify(t, s.plain.ref(repo+"@"+img.Digest.String()), oci11...)

			other := t.TempDir()
			require.Zero(t, cosign(t, other, "x", "generate-key-pair").ExitCode)
			res = s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "verify", "--signature", "--key", filepath.Join(other, "cosign.pub"), "--insecure-ignore-tlog", img.ref())
			assert.Equal(t, 1, res.ExitCode, "%s", res)
			assert.Contains(t, res.Stdout, "none valid")
			assert.Equal(t, len(targets)+1, strings.Count(res.Stdout, "signed: FAIL"), "one line per platform (each names its digest) and one for the index:\n%s", res.Stdout)
		})
	}
}

// repoTags are repo's tags on reg (docker-registry or the in-process
// registry with the referrers API).
func repoTags(t *testing.T, reg *registry, repo string) []string {
	t.Helper()
	r, err := name.NewRepository(reg.ref(repo), name.Insecure)
	require.NoError(t, err)
	tags, err := remote.List(r)
	require.NoError(t, err)
	return tags
}

// assertSignatureReferrers: the index and each manifest it lists (the
// platforms' and their attestation manifests) have one referrer, cosign's
// legacy signature in its OCI 1.1 form, named by the metadata file.
func assertSignatureReferrers(t *testing.T, reg *registry, repo string, img pushedImage) {
	t.Helper()
	sigs := map[string]string{}
	for _, s := range img.Meta.Signatures {
		assert.Equal(t, "legacy-referrer", s.Format)
		sigs[s.Subject] = s.Digest
	}
	require.Contains(t, sigs, img.Digest.String(), "the index's signature")
	for _, p := range img.Meta.Platforms {
		require.Contains(t, sigs, p.Digest, "%s's signature", p.Platform)
	}
	for sub, sig := range sigs {
		d, err := name.NewDigest(reg.ref(repo+"@"+sub), name.Insecure)
		require.NoError(t, err)
		idx, err := remote.Referrers(d)
		require.NoError(t, err)
		im, err := idx.IndexManifest()
		require.NoError(t, err)
		require.Len(t, im.Manifests, 1, "referrers of %s", sub)
		assert.Equal(t, sig, im.Manifests[0].Digest.String())
		m, err := remote.Get(d.Context().Digest(sig))
		require.NoError(t, err)
		var got struct {
			ArtifactType string `json:"artifactType"`
		}
		require.NoError(t, json.Unmarshal(m.Manifest, &got))
		assert.Equal(t, "application/vnd.dev.cosign.artifact.sig.v1+json", got.ArtifactType)
	}
}

// inspectManifest is the raw manifest of reg's repo@digest.
func inspectManifest(t *testing.T, reg *registry, ref string) string {
	t.Helper()
	d, err := name.NewDigest(reg.ref(ref), name.Insecure)
	require.NoError(t, err)
	m, err := remote.Get(d)
	require.NoError(t, err)
	return string(m.Manifest)
}
