//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTLSRegistryWithAuth pushes to the registry that needs TLS and htpasswd credentials,
// once with a Docker config file and once with GitLab CI's CI_REGISTRY* variables, and
// runs the result in containerd pulling with the same credentials.
func TestTLSRegistryWithAuth(t *testing.T) {
	s := suiteFor(t)
	r := s.secure
	base := r.ref(baseRepo + ":" + baseTag) // the base is read with the same credentials
	var viaDockerConfig, viaCI pushedImage

	s.mustStep(t, "push with a Docker config file", func(t *testing.T) {
		env := s.helperbuildEnv(t, "DOCKER_CONFIG="+dockerConfigDir(t, r.Host, r.User, r.Password))
		viaDockerConfig = s.configFreePush(t, r, base, "e2e/helper", "docker-config", env)
		assertNoSecret(t, viaDockerConfig.Output, r.Password)
	})

	s.mustStep(t, "push with CI_REGISTRY credentials", func(t *testing.T) {
		env := s.helperbuildEnv(t, "CI_REGISTRY="+r.Host, "CI_REGISTRY_USER="+r.User, "CI_REGISTRY_PASSWORD="+r.Password)
		viaCI = s.configFreePush(t, r, base, "e2e/helper", "ci-registry", env)
		assertNoSecret(t, viaCI.Output, r.Password)
	})

	s.step(t, "both pushes made the same index", func(t *testing.T) {
		assert.Equal(t, viaDockerConfig.Digest, viaCI.Digest)
		_, digest := inspectRaw(t, r, viaCI.ref())
		assert.Equal(t, viaCI.Digest, digest, "digest in the registry")
	})

	for _, tg := range targets {
		s.step(t, "containerd pulls with credentials and runs/"+tg.slug(), func(t *testing.T) {
			ns := "tls-" + tg.slug()
			s.containerd.ctrPull(t, r, ns, viaCI.ref(), tg)
			out := s.containerd.ctrRun(t, ns, viaCI.ref(), tg, "sh", "-c", "gitlab-runner-helper --version").Stdout
			assert.Equal(t, "linux/"+tg.Arch, versionField(out, "OS/Arch"), "--version in containerd:\n%s", out)
		})
	}
}

// TestWrongPassword checks that a push with a wrong password fails with exit code 1 and one
// line naming the registry and the authentication failure, never shows the password and
// leaves the repository's tags as they were.
func TestWrongPassword(t *testing.T) {
	s := suiteFor(t)
	r := s.secure
	const repo = "e2e/wrong-password"
	var tagsBefore []string

	s.mustStep(t, "seed the repository with one tag", func(t *testing.T) {
		argv := append([]string{"skopeo", "copy", "--all", "--quiet"}, r.skopeoFlags("dest")...)
		sh(t, append(argv, s.base.ociRef(), "docker://"+r.ref(repo+":existing"))...)
		tagsBefore = listTags(t, r, repo)
		require.Equal(t, []string{"existing"}, tagsBefore)
	})

	cases := []struct {
		name string
		env  func(t *testing.T, wrong string) []string
	}{
		{"Docker config file", func(t *testing.T, wrong string) []string {
			return s.helperbuildEnv(t, "DOCKER_CONFIG="+dockerConfigDir(t, r.Host, r.User, wrong))
		}},
		{"CI_REGISTRY variables", func(t *testing.T, wrong string) []string {
			return s.helperbuildEnv(t, "CI_REGISTRY="+r.Host, "CI_REGISTRY_USER="+r.User, "CI_REGISTRY_PASSWORD="+wrong)
		}},
	}
	authFailed := regexp.MustCompile(`(?i)authentication|unauthorized`)
	for _, tc := range cases {
		s.step(t, tc.name, func(t *testing.T) {
			wrong := "wrong-pw-" + randomHex(6)
			// The base comes from the OCI layout, so the push itself meets the bad password.
			res := s.helperbuild(t, s.exampleDir(t), tc.env(t, wrong), "push",
				"--platforms", platformList(targets), "--base", s.base.ociRef(),
				"--tag", r.ref(repo+":"+exampleVersion), helperPackage)

			require.Equal(t, 1, res.ExitCode, "exit code:\n%s", res)
			lines := strings.Split(strings.TrimRight(res.Stderr, "\n"), "\n")
			assert.Equal(t, 1, len(lines), "stderr should be one line, has %d:\n%s", len(lines), res.Stderr)
			assert.Contains(t, res.Stderr, r.Host, "stderr names the registry")
			assert.Regexp(t, authFailed, res.Stderr)
			assertNoSecret(t, res, wrong, r.Password)

			assert.Equal(t, tagsBefore, listTags(t, r, repo), "tags after the failed push")
			assert.NotZero(t, tryInspectRaw(t, r, r.ref(repo+":"+exampleVersion)).ExitCode,
				"the tag of the failed push exists")
		})
	}
}

// TestUntrustedCertificate reads from the TLS registry without trusting its self-signed
// certificate: one line naming the registry, SSL_CERT_FILE and --insecure-registry HOST (not
// the https-then-http attempts), and --insecure-registry HOST then works.
func TestUntrustedCertificate(t *testing.T) {
	s := suiteFor(t)
	r := s.secure
	ref := r.ref(baseRepo + ":" + baseTag)
	creds := []string{"SSL_CERT_FILE=", "SSL_CERT_DIR=", "CI_REGISTRY=" + r.Host, "CI_REGISTRY_USER=" + r.User, "CI_REGISTRY_PASSWORD=" + r.Password}

	s.step(t, "untrusted", func(t *testing.T) {
		res := s.helperbuild(t, t.TempDir(), s.helperbuildEnv(t, creds...), "verify", "--retries", "0", ref)
		require.Equal(t, 1, res.ExitCode, "exit code:\n%s", res)
		assert.Equal(t, "helperbuild: "+ref+": the certificate of "+r.Host+" is signed by an unknown authority: trust its CA with SSL_CERT_FILE=ca.pem or the system CA store (update-ca-certificates), or pass --insecure-registry "+r.Host+"\n", res.Stderr)
		assertNoSecret(t, res, r.Password)
	})

	s.step(t, "--insecure-registry", func(t *testing.T) {
		res := s.helperbuild(t, t.TempDir(), s.helperbuildEnv(t, creds...), "verify", "--insecure-registry", r.Host, ref)
		assert.NotContains(t, res.Stderr, "certificate", "verify:\n%s", res)
		assert.Contains(t, res.Stdout, ref, "the report")
	})
}

// dockerConfigDir writes a Docker config.json with credentials for host and returns its
// directory (for DOCKER_CONFIG).
func dockerConfigDir(t *testing.T, host, user, password string) string {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	config, err := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), config, 0o600))
	return dir
}

// assertNoSecret checks that none of secrets (nor their base64 form in a Docker config)
// appears in a command's output.
func assertNoSecret(t *testing.T, res result, secrets ...string) {
	t.Helper()
	out := res.Stdout + res.Stderr
	for _, secret := range secrets {
		assert.NotContains(t, out, secret, "a password is in the output")
		assert.NotContains(t, out, base64.StdEncoding.EncodeToString([]byte(secret)), "a base64 password is in the output")
	}
}
