package main

import (
	"context"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/test/faultproxy"
)

// relDigest returns the digest on the first stdout line ("REF@sha256:...").
func relDigest(t *testing.T, stdout string) string {
	t.Helper()
	first, _, _ := strings.Cut(stdout, "\n")
	_, digest, ok := strings.Cut(first, "@")
	require.True(t, ok, "no REF@DIGEST line in %q", stdout)
	return digest
}

func relProxy(t *testing.T, o faultproxy.Options) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(o)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// TestPushThroughTransientFaults: a push through a proxy that resets, cuts
// short and fails requests succeeds with the digest of a fault-free push,
// logs each of its retries once and sums them up.
//
// Two proxies are chained. The outer one injects seeded faults anywhere;
// whether one of those reaches the retrying transport depends on the run
// (the keys hold digests of a random base, concurrent uploads race for the
// "PATCH .../blobs/uploads/*" decisions, net/http itself silently resends a
// GET or HEAD whose reused connection closed before answering, and a cut
// HEAD response carries no body to cut). The inner one fails the first
// manifest PUT of every key and the first blob upload PATCH with a 5xx in
// every run: those must be retried by the transport and by the upload
// restart. No fault stalls: the per-attempt timeout is pinned by the retry
// package's tests with stall timers fired by hand, not by a clock here.
func TestPushThroughTransientFaults(t *testing.T) {
	dir := relModule(t)
	t.Chdir(dir)
	base := relRegistry(t, "", "")
	relPushIndex(t, base+"/g/base:1", relAmd64Index(t), "", "")
	push := func(tag string, extra ...string) relResult {
		args := append([]string{"push", "--platforms", "linux/amd64", "--base", base + "/g/base:1", "--tag", tag}, extra...)
		return relRun(t, t.Context(), relEnv(t), append(args, "./cmd/app")...)
	}

	clean := relRegistry(t, "", "")
	res := push(clean+"/g/app:v1", "--retries", "0")
	require.Equal(t, 0, res.code, res.stderr)
	want := relDigest(t, res.stdout)

	faulty := relRegistry(t, "", "")
	sure := relProxy(t, faultproxy.Options{Target: "http://" + faulty, Rate: 1, MaxPerKey: 1,
		Faults: []faultproxy.Fault{faultproxy.Status5xx}, Match: func(r *http.Request) bool {
			return relManifestPut(r) || (r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/blobs/uploads/"))
		}})
	noise := relProxy(t, faultproxy.Options{Target: sure.URL(), Seed: 7, Rate: 0.3,
		Faults: []faultproxy.Fault{faultproxy.Status5xx, faultproxy.ResetMidBody, faultproxy.Truncate}})
	res = push(noise.Addr()+"/g/app:v1", "--retries", "5", "-v") // -v: each retry on its line
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, want, relDigest(t, res.stdout), "same digest as the fault-free push")

	st, sureSt := noise.Stats(), sure.Stats()
	t.Logf("%d requests, faults %v, then %v", st.Requests, st.Faults, sureSt.Faults)
	manifestPuts, patches := 0, 0
	for _, inj := range sureSt.Injected {
		if strings.HasPrefix(inj.Key, "PATCH ") {
			patches++
		} else {
			manifestPuts++
		}
	}
	require.Equal(t, 1, patches, "the first upload PATCH failed: %v", sureSt.Injected)
	require.Positive(t, manifestPuts, "manifest PUTs failed: %v", sureSt.Injected)
	assert.GreaterOrEqual(t, strings.Count(res.stderr, `msg="retrying request" method=PUT url=http://`+noise.Addr()+"/v2/g/app/manifests/"),
		manifestPuts, "every failed manifest PUT retried by the transport")
	assert.GreaterOrEqual(t, strings.Count(res.stderr, `msg="restarting blob upload"`), patches, "the failed upload restarted")

	summary := regexp.MustCompile(`msg="registry retries, every request to the host together" host=(\S+) retries=(\d+) last=`).FindAllStringSubmatch(res.stderr, -1)
	require.Len(t, summary, 1, "one summary line, for the one host that failed, in %s", res.stderr)
	assert.Equal(t, noise.Addr(), summary[0][1])
	lines := strings.Count(res.stderr, `msg="retrying request"`) + strings.Count(res.stderr, `msg="restarting blob upload"`)
	assert.Equal(t, summary[0][2], strconv.Itoa(lines), "with -v, one log line per retry")

	ref, err := name.ParseReference(faulty + "/g/app:v1")
	require.NoError(t, err)
	desc, err := remote.Head(ref)
	require.NoError(t, err)
	assert.Equal(t, want, desc.Digest.String(), "the registry holds it under the tag")
}

func relManifestPut(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
}

// TestPushUnderPersistentFaultFailsClearly: when every manifest PUT fails,
// the push fails with one error line naming the image, the push and the status, after
// its retries, and tags nothing.
func TestPushUnderPersistentFaultFailsClearly(t *testing.T) {
	dir := relModule(t)
	t.Chdir(dir)
	reg := relRegistry(t, "", "")
	p := relProxy(t, faultproxy.Options{Target: "http://" + reg, Persistent: true, Faults: []faultproxy.Fault{faultproxy.Status5xx},
		Match: relManifestPut})
	res := relRun(t, t.Context(), relEnv(t), "push", "--retries", "2", "--platforms", "linux/amd64", "--base", "scratch",
		"--tag", p.Addr()+"/g/app:v1", "./cmd/app")
	assert.Equal(t, 1, res.code, res.stderr)
	assert.Empty(t, res.stdout)
	lines := relLines(res.stderr)
	require.NotEmpty(t, lines)
	last := lines[len(lines)-1]
	// The platform's manifest is put as soon as its image is built, so the
	// line names the image and platform, then the push.
	assert.True(t, strings.HasPrefix(last, "helperbuild: image app for linux/amd64: push "+p.Addr()+"/g/app@sha256:"), last)
	assert.Contains(t, last, "faultproxy: injected 50")
	// Without -v, one line for the host (count, last cause), not one per
	// retry in another format (issue 25: a down registry printed ~20).
	assert.Zero(t, strings.Count(res.stderr, `msg="retrying request"`), res.stderr)
	// Each failed manifest PUT retried twice (--retries 2).
	retried := regexp.MustCompile(`(?m)^level=WARN msg="registry retries, every request to the host together" host=` + regexp.QuoteMeta(p.Addr()) + ` retries=(\d+) last="status 50\d"$`).FindStringSubmatch(res.stderr)
	require.NotNil(t, retried, res.stderr)
	n, _ := strconv.Atoi(retried[1])
	// Manifests may be PUT side by side; when one gives up, the run's
	// context stops the others mid-retry. So: no PUT tried more than 1+2
	// times, the one that gave up tried exactly 3, and the summary counts
	// no more retries than the PUTs could have had.
	attempts := map[string]int{}
	for _, inj := range p.Stats().Injected {
		attempts[inj.Key]++
	}
	most := 0
	for key, a := range attempts {
		assert.LessOrEqual(t, a, 3, "%s tried more than 1+--retries times", key)
		most = max(most, a)
	}
	t.Logf("retries=%d, attempts per PUT: %v", n, attempts)
	assert.Equal(t, 3, most, "the PUT that failed the push was retried twice: %v", attempts)
	assert.True(t, n >= 2 && n <= 2*len(attempts), "retries=%d for %d failed PUTs (%v)", n, len(attempts), attempts)
	assert.Equal(t, 1, strings.Count(res.stderr, `msg="registry retries, every request to the host together"`), res.stderr)

	ref, err := name.ParseReference(reg + "/g/app:v1")
	require.NoError(t, err)
	_, err = remote.Head(ref)
	assert.ErrorContains(t, err, "404", "nothing was tagged")
}

// relSignal is what main's signal handler cancels the run's context with.
type relSignal struct{ sig os.Signal }

func (s relSignal) Error() string     { return "received " + s.sig.String() }
func (s relSignal) Signal() os.Signal { return s.sig }

// TestSignalExitCodes: a run cancelled by SIGINT exits 130, by SIGTERM 143,
// promptly, even while a registry stalls.
func TestSignalExitCodes(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			dir := relModule(t)
			t.Chdir(dir)
			reg := relRegistry(t, "", "")
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			var once sync.Once
			p := relProxy(t, faultproxy.Options{Target: "http://" + reg, Persistent: true,
				Faults: []faultproxy.Fault{faultproxy.Slow}, Delay: 5 * time.Minute,
				Match: func(*http.Request) bool {
					once.Do(func() { cancel(relSignal{tt.sig}) }) // the registry is being reached: interrupt
					return true
				}})
			res := relRun(t, ctx, relEnv(t), "push", "--platforms", "linux/amd64", "--base", "scratch",
				"--tag", p.Addr()+"/g/app:v1", "./cmd/app")
			assert.Equal(t, tt.code, res.code, res.stderr)
			assert.Empty(t, res.stdout)
			lines := relLines(res.stderr)
			require.NotEmpty(t, lines)
			assert.True(t, strings.HasPrefix(lines[len(lines)-1], "helperbuild: "), lines[len(lines)-1])
		})
	}
}
