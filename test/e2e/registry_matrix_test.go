//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// matrixTargets are the matrix's platforms: two keep each cell short.
var matrixTargets = targets[:2]

// TestRegistryMatrix runs a release's commands against {distribution 2.8, distribution v3}
// x {token auth with tokens that expire every 8 requests (and after 2 s; GitLab's
// protocol, a CI job token), basic auth,
// anonymous}: push on a base from the same registry, a by-digest fan-out merged to the
// same index, index of its manifests into another repository, verify, and a key-signed
// push verified with helperbuild verify --signature. Each run reports requests, 401s the
// registry answered, tokens issued and renewed after expiry, and bytes uploaded; the push's
// uploaded bytes are the same whatever the auth (so expiry uploads nothing twice), and no
// password, job token or token is in any output or file written.
func TestRegistryMatrix(t *testing.T) {
	s := suiteFor(t)
	keys := t.TempDir()
	const keyPassword = "matrix-key-pw"
	// Not a step: a -run filter on the cells must not skip it.
	res := cosign(t, keys, keyPassword, "generate-key-pair")
	require.Zero(t, res.ExitCode, "cosign generate-key-pair:\n%s", res)
	key, pub := filepath.Join(keys, "cosign.key"), filepath.Join(keys, "cosign.pub")

	var mu sync.Mutex
	uploaded := map[string]map[string]int64{} // impl -> auth -> bytes the push uploaded
	var rows []string
	for _, impl := range registryImpls {
		for _, auth := range []string{authToken, authBasic, authAnonymous} {
			t.Run(impl.Name+"/"+auth, func(t *testing.T) {
				r := s.startAuthRegistry(t, impl, auth, authRegistryOptions{})
				c := s.releaseCommands(t, r, key, pub, keyPassword)
				mu.Lock()
				defer mu.Unlock()
				if uploaded[impl.Name] == nil {
					uploaded[impl.Name] = map[string]int64{}
				}
				uploaded[impl.Name][auth] = c.push.Uploaded
				rows = append(rows, fmt.Sprintf("%-17s %-9s push: %s | whole run: %s", impl.Name, auth, c.push, c.total))
				if auth == authToken {
					assert.Positive(t, c.push.Expired, "tokens expired during the push")
					assert.Positive(t, c.total.Renewed, "tokens expired and were renewed during the run")
				}
			})
		}
	}
	s.step(t, "the push uploaded the same bytes whatever the auth", func(t *testing.T) {
		for impl, byAuth := range uploaded {
			if len(byAuth) < 3 {
				continue // a cell failed; it says why
			}
			assert.Equal(t, byAuth[authAnonymous], byAuth[authBasic], "%s: basic vs anonymous", impl)
			assert.Equal(t, byAuth[authAnonymous], byAuth[authToken], "%s: expiring tokens vs anonymous", impl)
		}
		t.Logf("registry matrix:\n%s", strings.Join(rows, "\n"))
	})
}

// matrixCounts are one cell's counts: its push alone and the whole run.
type matrixCounts struct{ push, total counts }

// releaseCommands runs push, fan-out + merge, index, verify and a signed push against r
// as a GitLab CI job would (CI_REGISTRY*), each as a step, and checks that no secret of r
// is in any output or file written.
func (s *Suite) releaseCommands(t *testing.T, r *authRegistry, key, pub, keyPassword string) matrixCounts {
	dir := s.exampleDir(t)
	out := t.TempDir() // every file helperbuild writes
	env := s.helperbuildEnv(t, append(r.ciEnv(), "COSIGN_PASSWORD="+keyPassword, "GOFLAGS=-buildvcs=false")...)
	platforms := platformList(matrixTargets)
	base := r.ref(baseRepo + ":" + baseTag)
	var outputs []result
	hb := func(t *testing.T, args ...string) result {
		t.Helper()
		res := s.helperbuild(t, dir, env, args...)
		outputs = append(outputs, res)
		require.Zero(t, res.ExitCode, "helperbuild %s:\n%s", args[0], res)
		return res
	}
	start := r.counts()
	var mc matrixCounts
	var pushed metadataImage

	s.mustStep(t, "push (base from the registry)", func(t *testing.T) {
		before := r.counts()
		md := filepath.Join(out, "push.json")
		hb(t, "push", "--platforms", platforms, "--base", base, "--ldflags", exampleLdflags,
			"--tag", r.ref(jobProject+"/helper:"+exampleVersion), "--metadata-file", md,
			"--dotenv", filepath.Join(out, "push.env"), "--attest-dir", filepath.Join(out, "attest"), helperPackage)
		mc.push = r.counts().minus(before)
		pushed = readMetadata(t, md).image(t, "")
		require.Len(t, pushed.Platforms, len(matrixTargets))
		t.Logf("push: %s", mc.push)
	})

	s.step(t, "by-digest fan-out, merged: the push's index", func(t *testing.T) {
		parts := filepath.Join(out, "parts")
		require.NoError(t, os.MkdirAll(parts, 0o755))
		ref := r.ref(jobProject + "/fanout:" + exampleVersion)
		for i, tg := range matrixTargets {
			hb(t, "push", "--by-digest", "--part-file", filepath.Join(parts, fmt.Sprintf("%d.json", i)),
				"--platforms", tg.Platform, "--release-platforms", platforms, "--base", base,
				"--ldflags", exampleLdflags, "--tag", ref, "--cache-dir", t.TempDir(), helperPackage)
		}
		md := filepath.Join(out, "merge.json")
		hb(t, "merge", "--metadata-file", md, "--dotenv", filepath.Join(out, "merge.env"), parts)
		assert.Equal(t, pushed.Digest, readMetadata(t, md).image(t, "").Digest)
	})

	s.step(t, "index of the pushed manifests into another repository, verified", func(t *testing.T) {
		args := []string{"index", "--metadata-file", filepath.Join(out, "index.json"), "--tag", r.ref(jobProject + "/mirror/helper:v1")}
		for _, p := range pushed.Platforms {
			args = append(args, r.ref(jobProject+"/helper@"+p.Digest))
		}
		hb(t, args...)
		hb(t, "verify", "--platforms", platforms, r.ref(jobProject+"/mirror/helper:v1"))
	})

	s.step(t, "verify the push", func(t *testing.T) {
		hb(t, "verify", "--platforms", platforms, r.ref(jobProject+"/helper:"+exampleVersion))
	})

	s.step(t, "signed push (key, no transparency log), verify --signature", func(t *testing.T) {
		ref := r.ref(jobProject + "/signed:" + exampleVersion)
		hb(t, "push", "--platforms", platforms, "--base", base, "--ldflags", exampleLdflags, "--tag", ref,
			"--sign", "--sign-key", key, "--sign-tlog", "none", "--metadata-file", filepath.Join(out, "signed.json"),
			"--dotenv", filepath.Join(out, "signed.env"), "--attest-dir", filepath.Join(out, "attest-signed"), helperPackage)
		hb(t, "verify", "--signature", "--key", pub, "--insecure-ignore-tlog", "--platforms", platforms, ref)
	})

	mc.total = r.counts().minus(start)
	t.Logf("whole run: %s", mc.total)

	s.step(t, "no password, job token or token in any output or file", func(t *testing.T) {
		assertNothingLeaks(t, outputs, out, r.secrets())
	})
	return mc
}

// assertNothingLeaks checks every command's output and every file under dir for each
// secret, as is and base64-encoded (a Docker config's form).
func assertNothingLeaks(t *testing.T, outputs []result, dir string, secrets []string) {
	t.Helper()
	texts := map[string]string{}
	for i, res := range outputs {
		texts[fmt.Sprintf("output of %s", strings.Join(res.Argv[min(1, len(res.Argv)):min(2, len(res.Argv))], " "))+fmt.Sprint(" #", i)] = res.Stdout + res.Stderr
	}
	files := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		texts[path] = string(b)
		files++
		return err
	}))
	require.Positive(t, files, "files written under %s", dir)
	for where, text := range texts {
		for _, secret := range secrets {
			assert.NotContains(t, text, secret, "a secret in %s", where)
			assert.NotContains(t, text, base64.StdEncoding.EncodeToString([]byte(secret)), "a base64 secret in %s", where)
		}
	}
}
