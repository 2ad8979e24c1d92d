//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/testkit"
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
	})
	key, pub := filepath.Join(keys, "cosign.key"), filepath.Join(keys, "cosign.pub")
	api := testkit.ReferrersRegistry(t)

	cosignVerify := func(t *testing.T, ref string) {
		t.Helper()
		res := cosign(t, keys, password, "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", "--allow-insecure-registry", ref)
		assert.Zero(t, res.ExitCode, "cosign verify %s:\n%s", ref, res)
	}
	for _, tc := range []struct {
		format string
		reg    *registry
		extra  []string
	}{
		{"bundle", s.plain, nil},
		{"legacy", s.plain, nil},
		{"bundle", &registry{Host: api}, []string{"--insecure-registry", api}},
	} {
		name := tc.format + " on " + map[bool]string{true: "docker-registry", false: "a registry with the referrers API"}[tc.reg == s.plain]
		s.step(t, "helperbuild push --sign, "+name+": cosign verify accepts every manifest", func(t *testing.T) {
			repo := "e2e/signed-" + tc.format
			extra := append([]string{"--sign", "--sign-key", key, "--sign-format", tc.format, "--sign-tlog", "none"}, tc.extra...)
			img := s.configFreePush(t, tc.reg, base, repo, exampleVersion, s.helperbuildEnv(t, "COSIGN_PASSWORD="+password), extra...)
			cosignVerify(t, tc.reg.ref(repo+"@"+img.Digest.String()))
			for _, p := range img.Meta.Platforms {
				cosignVerify(t, tc.reg.ref(repo+"@"+p.Digest))
			}
			res := s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "verify", "--signature", "--key", pub,
				"--platforms", platformList(targets), "--insecure-registry", tc.reg.Host, img.ref())
			assert.Zero(t, res.ExitCode, "%s", res)
			if tc.format == "legacy" {
				assert.Contains(t, listTags(t, s.plain, repo), "sha256-"+img.Digest.Hex+".sig")
			}
		})
	}

	for _, bundle := range []bool{true, false} {
		format := map[bool]string{true: "bundle", false: "legacy"}[bundle]
		s.step(t, "cosign sign --recursive ("+format+"): helperbuild verify --signature accepts it, refuses another key", func(t *testing.T) {
			repo := "e2e/cosign-signed-" + format
			img := s.configFreePush(t, s.plain, base, repo, exampleVersion, s.helperbuildEnv(t))
			// cosign takes a signing config only for bundles; the legacy
			// format is told not to use the log directly.
			noTlog := []string{"--signing-config", "no-tlog.json", "--new-bundle-format=true"}
			if !bundle {
				noTlog = []string{"--use-signing-config=false", "--tlog-upload=false", "--new-bundle-format=false"}
			}
			args := append([]string{"sign", "--key", key, "--recursive", "--yes", "--allow-http-registry", "--allow-insecure-registry"}, noTlog...)
			res := cosign(t, keys, password, append(args, s.plain.ref(repo+"@"+img.Digest.String()))...)
			require.Zero(t, res.ExitCode, "%s", res)
			res = s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "verify", "--signature", "--key", pub,
				"--platforms", platformList(targets), img.ref())
			assert.Zero(t, res.ExitCode, "%s", res)
			assert.Contains(t, res.Stdout, "SIGNED")

			other := t.TempDir()
			require.Zero(t, cosign(t, other, "x", "generate-key-pair").ExitCode)
			res = s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "verify", "--signature", "--key", filepath.Join(other, "cosign.pub"), img.ref())
			assert.Equal(t, 1, res.ExitCode, "%s", res)
			assert.Contains(t, res.Stdout, "none valid")
			assert.Equal(t, len(targets)+1, strings.Count(res.Stdout, "signed: FAIL"), "one line per platform (each names its digest) and one for the index:\n%s", res.Stdout)
		})
	}
}
