//go:build e2e

package e2e

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// indexRepos names the source repositories TestIndex fills, GitLab-style.
const (
	indexHelperRepo = "e2e-gitlab/gitlab-runner-helper"
	indexLiarRepo   = "e2e-gitlab/liar-helper" // arm64-v17.10.0's config says amd64
)

// pushGitLabHelperTags writes one image per target to r as REPO:<gitlab arch>-v17.10.0,
// made with go build and go-containerregistry's mutate (not helperbuild): /bin/hello for
// the target, its config saying the target, or amd64 for arm64 when lie.
func pushGitLabHelperTags(t *testing.T, r *registry, repo string, lie bool) {
	t.Helper()
	opts := []remote.Option{remote.WithAuth(&authn.Basic{Username: r.User, Password: r.Password}),
		remote.WithTransport(r.httpClient().Transport)}
	for _, tg := range targets {
		cfg := v1.Platform{OS: tg.OS, Architecture: tg.Arch, Variant: tg.Variant}
		if lie && tg.Arch == "arm64" {
			cfg = v1.Platform{OS: "linux", Architecture: "amd64"}
		}
		ref, err := name.ParseReference(r.ref(repo + ":" + tg.GitLabArch + "-v17.10.0"))
		require.NoError(t, err)
		require.NoError(t, remote.Write(ref, testkit.ArchImage(t, os.Environ(), cfg, tg.Arch), opts...))
	}
}

// startTLSCountingProxy is a countingProxy for a TLS registry: it serves r's certificate
// (made for localhost, any port) and forwards to r over TLS.
func startTLSCountingProxy(t *testing.T, r *registry) *countingProxy {
	t.Helper()
	target, err := url.Parse(r.baseURL())
	require.NoError(t, err)
	cert, err := tls.LoadX509KeyPair(r.CertFile, filepath.Join(filepath.Dir(r.CertFile), "key.pem"))
	require.NoError(t, err)
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = r.httpClient().Transport
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p.mu.Lock()
		p.requests = append(p.requests, req.Method+" "+req.URL.Path)
		if req.Method == http.MethodPost && req.URL.Query().Get("from") != "" {
			p.mounts++
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, req)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	p.Host = "localhost:" + strings.TrimPrefix(srv.URL, "https://127.0.0.1:")
	return p
}

// TestIndex joins per-arch images that already exist in a registry with htpasswd auth
// into one index in another TLS registry, and checks it the way a cluster uses it.
func TestIndex(t *testing.T) {
	s := suiteFor(t)
	src := s.secure
	dir := t.TempDir()
	dst, err := startRegistry(filepath.Join(dir, "target"), "index-target", true)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dst.stop() })
	proxy := startTLSCountingProxy(t, dst)

	// Both registries' certificates, and credentials for each (the proxy's are the target's).
	certs := filepath.Join(dir, "certs.pem")
	a, err := os.ReadFile(src.CertFile)
	require.NoError(t, err)
	b, err := os.ReadFile(dst.CertFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certs, append(a, b...), 0o644))
	docker := dockerConfigDir(t, src.Host, src.User, src.Password)
	addDockerAuth(t, docker, dst.Host, dst.User, dst.Password)
	addDockerAuth(t, docker, proxy.Host, dst.User, dst.Password)
	env := s.helperbuildEnv(t, "DOCKER_CONFIG="+docker, "SSL_CERT_FILE="+certs)

	s.mustStep(t, "per-arch sources made by go build and go-containerregistry", func(t *testing.T) {
		pushGitLabHelperTags(t, src, indexHelperRepo, false)
		pushGitLabHelperTags(t, src, indexLiarRepo, true)
	})
	target := proxy.Host + "/mirror/gitlab-runner-helper"
	args := []string{"index", "--gitlab-helper", src.ref(indexHelperRepo), "--version", "v17.10.0", "--tag", target + ":v17.10.0"}
	var digest string
	s.mustStep(t, "five per-arch tags become one index", func(t *testing.T) {
		res := s.mustHelperbuild(t, dir, env, args...)
		digest = pinnedDigest(t, res.Stdout, target)
		assert.NotEmpty(t, proxy.blobUploads(), "the first run copies the blobs")
		assertNoSecret(t, res, src.Password, dst.Password)
		raw, d := inspectRaw(t, dst, dst.ref("mirror/gitlab-runner-helper:v17.10.0"))
		assert.Equal(t, digest, d.String())
		idx := runnable(t, parseIndex(t, raw))
		var got []string
		for _, m := range idx.Manifests {
			got = append(got, platformOf(m))
		}
		assert.Equal(t, strings.Split(platformList(targets), ","), got, "GitLab's order")
	})
	for _, tg := range targets {
		s.step(t, "containerd pulls and runs its own binary/"+tg.slug(), func(t *testing.T) {
			ns := "index-" + tg.slug()
			ref := dst.ref("mirror/gitlab-runner-helper:v17.10.0")
			s.containerd.ctrPull(t, dst, ns, ref, tg)
			out := s.containerd.ctrRun(t, ns, ref, tg, "/bin/hello").Stdout
			assert.Equal(t, tg.OS+"/"+tg.Arch, versionField(out, "OS/Arch"), out)
		})
	}
	s.step(t, "the same run again: the same digest, no blob uploaded", func(t *testing.T) {
		before := len(proxy.blobUploads())
		res := s.mustHelperbuild(t, dir, env, args...)
		assert.Equal(t, digest, pinnedDigest(t, res.Stdout, target))
		assert.Len(t, proxy.blobUploads(), before, "requests: %s", proxy.summary())
	})
	s.step(t, "verify passes on the result", func(t *testing.T) {
		s.mustHelperbuild(t, dir, env, "verify", "--platforms", platformList(targets), target+":v17.10.0")
	})
	s.step(t, "an index as the source, on the same registry: every blob mounted, none uploaded", func(t *testing.T) {
		uploads, mounts := len(proxy.blobUploads()), proxy.mountRequests()
		res := s.mustHelperbuild(t, dir, env, "index", "--attest", "none", "--tag", proxy.Host+"/mirror/copy:v1", target+":v17.10.0")
		raw, _ := inspectRaw(t, dst, dst.ref("mirror/copy:v1"))
		idx := parseIndex(t, raw)
		assert.Len(t, idx.Manifests, 10, "5 images, and the attestation about each went along:\n%s", res.Stdout)
		assert.Len(t, proxy.blobUploads(), uploads, "requests: %s", proxy.summary())
		assert.GreaterOrEqual(t, proxy.mountRequests()-mounts, 10, "the 5 layers and 5 configs at least")
	})

	liarArgs := []string{"index", "--gitlab-helper", src.ref(indexLiarRepo), "--version", "v17.10.0", "--tag", proxy.Host + "/mirror/fixed:v1"}
	s.step(t, "a config that lies about its binaries is refused, nothing written", func(t *testing.T) {
		before := len(proxy.blobUploads())
		res := s.helperbuild(t, dir, env, liarArgs...)
		assert.Equal(t, 1, res.ExitCode, "%s", res)
		assert.Equal(t, "helperbuild: source "+src.ref(indexLiarRepo)+":arm64-v17.10.0: config says linux/amd64, binaries are linux/arm64 "+
			"(/bin/hello is ELF 64-bit LSB aarch64 (linux/arm64), not linux/amd64; 1 of 1 executables); --fix-platform publishes it with a config that says linux/arm64\n",
			lastLine(res.Stderr))
		assert.Len(t, proxy.blobUploads(), before, "no blob written")
		assert.Empty(t, listTags(t, dst, "mirror/fixed"))
	})
	s.step(t, "with --fix-platform it verifies and arm64 nodes get the arm64 binary", func(t *testing.T) {
		res := s.mustHelperbuild(t, dir, env, append(liarArgs, "--fix-platform")...)
		assert.Contains(t, res.Stdout, "FIXED: its config said linux/amd64, its ELF executables (1) are linux/arm64")
		s.mustHelperbuild(t, dir, env, "verify", "--platforms", platformList(targets), proxy.Host+"/mirror/fixed:v1")
		tg := targets[1]
		require.Equal(t, "arm64", tg.Arch)
		s.containerd.ctrPull(t, dst, "index-fixed", dst.ref("mirror/fixed:v1"), tg)
		out := s.containerd.ctrRun(t, "index-fixed", dst.ref("mirror/fixed:v1"), tg, "/bin/hello").Stdout
		assert.Equal(t, "linux/arm64", versionField(out, "OS/Arch"), out)
	})
	s.step(t, "refusals leave nothing tagged", func(t *testing.T) { indexRefusals(t, s, dir, env, src, dst, proxy.Host, digest) })
}

// indexRefusals: each run exits 1 with one line naming what is wrong, and mirror/refused
// gets no tag.
func indexRefusals(t *testing.T, s *Suite, dir string, env []string, src, dst *registry, proxyHost, digest string) {
	raw, _ := inspectRaw(t, dst, dst.ref("mirror/gitlab-runner-helper@"+digest))
	var attestation string
	for _, m := range parseIndex(t, raw).Manifests {
		if m.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
			attestation = dst.ref("mirror/gitlab-runner-helper@" + m.Digest.String())
			break
		}
	}
	require.NotEmpty(t, attestation, "the index holds helperbuild's provenance")
	helper := []string{"--gitlab-helper", src.ref(indexHelperRepo), "--version", "v17.10.0"}
	noPush := dockerConfigDir(t, src.Host, src.User, src.Password)
	addDockerAuth(t, noPush, proxyHost, dst.User, "wrong-"+dst.Password)
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"duplicate platform", env, append(helper, src.ref(indexLiarRepo+":x86_64-v17.10.0")), "linux/amd64 comes from 2 sources"},
		{"missing platform", env, []string{"--platforms", "linux/amd64,linux/riscv64", src.ref(indexHelperRepo + ":x86_64-v17.10.0")}, "no source offers linux/riscv64"},
		{"unreachable source", env, []string{"localhost:1/nothing:v1"}, "source localhost:1/nothing:v1"},
		{"an attestation as a source", env, []string{attestation}, "is an attestation manifest (about sha256:"},
		{"no push rights on the target", append(append([]string(nil), env...), "DOCKER_CONFIG="+noPush), helper, proxyHost},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := s.helperbuild(t, dir, c.env, append([]string{"index", "--retries", "0", "--tag", proxyHost + "/mirror/refused:v1"}, c.args...)...)
			assert.Equal(t, 1, res.ExitCode, "%s", res)
			assert.Contains(t, lastLine(res.Stderr), c.want)
			assert.Equal(t, 1, strings.Count(res.Stderr, "helperbuild: "), "%s", res)
			assert.Empty(t, listTags(t, dst, "mirror/refused"))
		})
	}
}

var pinnedLine = regexp.MustCompile(`(?m)^(\S+)@(sha256:[0-9a-f]{64})$`)

// pinnedDigest is the digest of the summary's first line, REPO@DIGEST.
func pinnedDigest(t *testing.T, stdout, repo string) string {
	t.Helper()
	m := pinnedLine.FindStringSubmatch(stdout)
	require.NotNil(t, m, "no REPO@DIGEST line in:\n%s", stdout)
	require.Equal(t, repo, m[1])
	return m[2]
}

// lastLine is the last non-empty line of s, with its newline.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

// addDockerAuth adds credentials for host to the Docker config in dir.
func addDockerAuth(t *testing.T, dir, host, user, password string) {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]map[string]map[string]string
	require.NoError(t, json.Unmarshal(data, &cfg))
	cfg["auths"][host] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
	data, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

// TestIndexOfCBinaries takes the suite's busybox base (Debian's static busybox, a C
// program, per platform) as an index source: its evidence is the ELF headers alone
// (arm's hard-float flag says v7), and the result verifies.
func TestIndexOfCBinaries(t *testing.T) {
	s := suiteFor(t)
	r := s.plain
	env := s.helperbuildEnv(t)
	s.step(t, "the busybox index, re-joined", func(t *testing.T) {
		res := s.mustHelperbuild(t, t.TempDir(), env, "index", "--platforms", platformList(targets), "--tag", r.ref("mirror/busybox:1"), r.ref(baseRepo+":"+baseTag))
		for _, tg := range targets {
			// The sources column is aligned to the longest platform name.
			assert.Regexp(t, `(?m)^\s+`+regexp.QuoteMeta(tg.Platform)+` +`+regexp.QuoteMeta(r.ref(baseRepo+":"+baseTag))+` \(sha256:`, res.Stdout)
		}
		s.mustHelperbuild(t, t.TempDir(), env, "verify", "--platforms", platformList(targets), r.ref("mirror/busybox:1"))
	})
}
