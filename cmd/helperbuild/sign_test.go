package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/release"
)

// keyPair writes a cosign key pair (encrypted with password) into dir.
func keyPair(t *testing.T, dir, password string) (priv, pub string) {
	t.Helper()
	p, q, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), func(bool) ([]byte, error) { return []byte(password), nil })
	require.NoError(t, err)
	priv, pub = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	require.NoError(t, os.WriteFile(priv, p, 0o600))
	require.NoError(t, os.WriteFile(pub, q, 0o644))
	return priv, pub
}

// TestPushSignVerify: push --sign signs the index and each platform
// manifest, in both formats; verify --signature accepts the key's
// signatures and refuses another key's, and an unsigned image.
func TestPushSignVerify(t *testing.T) {
	helloModule(t)
	keys := t.TempDir()
	priv, pub := keyPair(t, keys, "s3cret")
	other := t.TempDir()
	_, otherPub := keyPair(t, other, "x")
	env := baseEnv("COSIGN_PASSWORD=s3cret")

	for _, format := range []string{"bundle", "legacy"} {
		t.Run(format, func(t *testing.T) {
			host, _ := startRegistry(t)
			ref := host + "/group/hello:v1"
			out := t.TempDir()
			code, stdout, stderr := run(t, env, "push", "--platforms", "linux/amd64,linux/arm64", "--base", "scratch", "--revision", testCommit,
				"--sign", "--sign-key", priv, "--sign-format", format, "--sign-tlog", "none", "--tag", ref,
				"--metadata-file", filepath.Join(out, "meta.json"), "--attest-dir", filepath.Join(out, "attest"), "./cmd/hello")
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "  signed: 5 "+format+" (the index, 2 platform manifests, 2 attestation manifests) by key ")
			var m release.Metadata
			data, err := os.ReadFile(filepath.Join(out, "meta.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &m))
			require.Len(t, m.Images[0].Signatures, 5, "the index, two platforms, their two attestation manifests")
			assert.Equal(t, m.Images[0].Digest, m.Images[0].Signatures[0].Subject)
			assert.Equal(t, format, m.Images[0].Signatures[0].Format)
			bundle, err := os.ReadFile(filepath.Join(out, "attest", "hello", "linux-arm64", "signature.sigstore.json"))
			if format == "bundle" {
				require.NoError(t, err)
				assert.Contains(t, string(bundle), "application/vnd.dev.sigstore.bundle.v0.3+json")
			} else {
				assert.True(t, os.IsNotExist(err), "legacy signatures are no bundles: %v", err)
			}

			// Signed without a log: refused, as cosign does, unless told.
			code, stdout, _ = run(t, baseEnv(), "verify", "--signature", "--key", pub, "--platforms", "linux/amd64,linux/arm64", ref)
			assert.Equal(t, 1, code, stdout)
			assert.Contains(t, stdout, "index signed: FAIL: index: 1 signature(s) of sha256:")
			assert.Contains(t, stdout, "no transparency log entry, so nothing proves when it was signed")
			assert.Contains(t, stdout, "give --insecure-ignore-tlog")

			code, stdout, stderr = run(t, baseEnv(), "verify", "--signature", "--key", pub, "--insecure-ignore-tlog", "--platforms", "linux/amd64,linux/arm64", ref)
			assert.Equal(t, 0, code, "%s\n%s", stdout, stderr)
			assert.Contains(t, stdout, "SIGNED")
			for _, l := range strings.Split(stdout, "\n") {
				if strings.HasPrefix(l, "linux/") {
					assert.True(t, strings.HasSuffix(strings.TrimSpace(l), "ok"), "SIGNED is the last column: %s", l)
				}
			}

			code, stdout, _ = run(t, baseEnv(), "verify", "--signature", "--key", otherPub, ref)
			assert.Equal(t, 1, code, stdout)
			assert.Contains(t, stdout, "none valid")
			assert.Contains(t, stdout, "index signed: FAIL", "the index's signature is checked too:\n%s", stdout)
		})
	}

	// Unsigned: verify names the digest and where it looked.
	host, _ := startRegistry(t)
	code, _, stderr := run(t, env, "push", "--platforms", "linux/amd64", "--base", "scratch", "--revision", testCommit, "--tag", host+"/group/hello:v1", "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	code, stdout, _ := run(t, baseEnv(), "verify", "--signature", "--key", pub, host+"/group/hello:v1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "not signed: no Sigstore bundle among the referrers of sha256:")
}

// TestSignRefusals: a wrong password and a missing key or token fail
// before anything is built or pushed; --sign-format bundle where the
// registry resolves sha256-<hex> to the image fails before any tag moves.
func TestSignRefusals(t *testing.T) {
	helloModule(t)
	priv, _ := keyPair(t, t.TempDir(), "right")
	host, uploads := startRegistry(t)
	push := func(env []string, extra ...string) (int, string) {
		args := append([]string{"push", "--platforms", "linux/amd64", "--base", "scratch", "--revision", testCommit, "--tag", host + "/group/hello:v1", "--sign", "--sign-tlog", "none"}, extra...)
		code, _, stderr := run(t, env, append(args, "./cmd/hello")...)
		return code, stderr
	}
	code, stderr := push(baseEnv("COSIGN_PASSWORD=wrong"), "--sign-key", priv)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "COSIGN_PASSWORD does not decrypt it")
	// Unset is not wrong (issue 39): the error says which.
	code, stderr = push(baseEnv(), "--sign-key", priv)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "--sign-key "+priv+": the key is encrypted and COSIGN_PASSWORD is not set (set it to the password the key was made with)")
	code, stderr = push(baseEnv())
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "SIGSTORE_ID_TOKEN")
	code, stderr = push(baseEnv("SIGSTORE_ID_TOKEN=not-a-jwt"))
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "OIDC token is not a JWT")
	assert.Zero(t, uploads.Load(), "nothing uploaded")

	gitlab := testkit.Registry(t, testkit.ResolvesDigestTags)
	code, _, stderr = run(t, baseEnv("COSIGN_PASSWORD=right"), "push", "--platforms", "linux/amd64", "--base", "scratch", "--revision", testCommit,
		"--tag", gitlab+"/group/hello:v1", "--sign", "--sign-key", priv, "--sign-format", "bundle", "--sign-tlog", "none", "./cmd/hello")
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "--sign-format legacy")
	repo, err := name.NewRepository(gitlab + "/group/hello")
	require.NoError(t, err)
	tags, err := remote.List(repo)
	require.NoError(t, err)
	assert.Empty(t, tags, "no tag moved")

	// auto signs there in the legacy format.
	code, _, stderr = run(t, baseEnv("COSIGN_PASSWORD=right"), "push", "--platforms", "linux/amd64", "--base", "scratch", "--revision", testCommit,
		"--tag", gitlab+"/group/hello:v1", "--sign", "--sign-key", priv, "--sign-tlog", "none", "./cmd/hello")
	require.Equal(t, 0, code, stderr)
	tags, err = remote.List(repo)
	require.NoError(t, err)
	assert.Len(t, tags, 4, "v1 and the .sig tags of the index, its one platform and its attestation manifest: %v", tags)
}

// TestSignServiceDown: keyless push whose Fulcio stays unavailable is
// retried, then fails with the service named, and no tag moves.
func TestSignServiceDown(t *testing.T) {
	helloModule(t)
	var calls atomic.Int64
	fulcio := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v2/configuration" { // the preflight's: an answer, even a 503
			calls.Add(1)
		}
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(fulcio.Close)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, nil)
	require.NoError(t, err)
	token, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: "https://gitlab.example.test", Subject: "project_path:group/project:ref_type:tag:ref:v1",
		Audience: jwt.Audience{"sigstore"}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	require.NoError(t, err)

	host, _ := startRegistry(t)
	code, _, stderr := run(t, baseEnv("SIGSTORE_ID_TOKEN="+token), "push", "--platforms", "linux/amd64", "--base", "scratch", "--revision", testCommit,
		"--tag", host+"/group/hello:v1", "--sign", "--sign-fulcio-url", fulcio.URL, "--sign-tlog", "none", "--retries", "2", "./cmd/hello")
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "503 Service Unavailable")
	assert.EqualValues(t, 3, calls.Load(), "the first request and two retries")
	repo, err := name.NewRepository(host + "/group/hello")
	require.NoError(t, err)
	tags, err := remote.List(repo)
	require.NoError(t, err)
	assert.Empty(t, tags, "no tag moved")
	assert.NotContains(t, stderr, token, "the token is never printed")
}

// TestIndexSign: index --sign signs the joined index and each platform
// manifest before the tag moves, and verify --signature accepts them.
func TestIndexSign(t *testing.T) {
	src, dst := testkit.Registry(t), testkit.Registry(t)
	gitlabHelperTags(t, src, "gitlab-org/helper", false)
	priv, pub := keyPair(t, t.TempDir(), "pw")
	target := dst + "/mirror/gitlab-runner-helper:v17.10.0"
	code, stdout, stderr := run(t, baseEnv("COSIGN_PASSWORD=pw"), "index", "--tag", target, "--gitlab-helper", src+"/gitlab-org/helper",
		"--version", "v17.10.0", "--platforms", "linux/amd64,linux/arm64", "--attest", "none", "--sign", "--sign-key", priv, "--sign-tlog", "none", "--sign-format", "bundle")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "  signed: 3 bundle (the index, 2 platform manifests) by key ", stdout)
	code, stdout, stderr = run(t, baseEnv(), "verify", "--signature", "--key", pub, "--insecure-ignore-tlog", target)
	assert.Equal(t, 0, code, stdout+stderr)
	assert.Contains(t, stdout, "SIGNED")
}

// TestSignPreflight: push --sign whose transparency log does not answer
// fails before anything compiles or is uploaded, exit 1, naming the log
// and --sign-tlog none (issue 37: it failed after the whole build with a
// bare DNS error). The log is a closed port on loopback: refused at once.
func TestSignPreflight(t *testing.T) {
	helloModule(t)
	priv, _ := keyPair(t, t.TempDir(), "pw")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String()
	require.NoError(t, l.Close())

	host, uploads := startRegistry(t)
	code, stdout, stderr := run(t, baseEnv("COSIGN_PASSWORD=pw"), "push", "--platforms", "linux/amd64", "--base", "scratch", "--revision", testCommit,
		"--tag", host+"/group/hello:v1", "--sign", "--sign-key", priv, "--sign-tlog", closed, "--progress", "json", "./cmd/hello")
	assert.Equal(t, 1, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "--sign: the transparency log "+closed+" does not answer: ")
	assert.Contains(t, stderr, "connection refused")
	assert.Contains(t, stderr, "nothing was built or uploaded: point --sign-tlog at a Rekor this job reaches, or, air-gapped, sign with --sign-tlog none (verifiers then need --insecure-ignore-tlog")
	assert.NotContains(t, stderr, `"compiled"`, "nothing compiled")
	assert.Zero(t, uploads.Load(), "nothing uploaded")
}

// TestSignKeyFromEnv: the command owns --sign-key env://NAME: it reads the
// variable and hands release the PEM under the flag's name; an empty or
// unset variable is a usage error (exit 2) naming the flag, before
// anything is built.
func TestSignKeyFromEnv(t *testing.T) {
	pem, err := os.ReadFile(plainKey(t, t.TempDir()))
	require.NoError(t, err)
	f := signFlags{sign: true, key: "env://SIGNING_KEY", format: "auto", tlog: "none"}
	req, err := f.request(Env{"SIGNING_KEY=" + string(pem)})
	require.NoError(t, err)
	assert.Equal(t, pem, req.KeyPEM)
	assert.Equal(t, "env://SIGNING_KEY", req.KeyName, "messages name the flag's value")

	for _, env := range []Env{nil, {"SIGNING_KEY="}} {
		_, err := f.request(env)
		assert.EqualError(t, err, "--sign-key env://SIGNING_KEY: the variable is empty or not set", "env %q", env)
	}

	code, _, stderr := run(t, baseEnv("SIGNING_KEY="), "push", "--platforms", "linux/amd64", "--base", "scratch", "--tag", "registry.invalid/g/hello:v1",
		"--sign", "--sign-key", "env://SIGNING_KEY", "./cmd/hello")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "helperbuild: --sign-key env://SIGNING_KEY: the variable is empty or not set")
}
