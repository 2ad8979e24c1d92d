package main

import (
	"context"
	"net/http"
	"os"
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
// short, stalls and fails requests succeeds with the digest of a fault-free
// push, logs its retries and sums them up.
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
	p := relProxy(t, faultproxy.Options{Target: "http://" + faulty, Seed: 7, Rate: 0.3,
		Faults: []faultproxy.Fault{faultproxy.Status5xx, faultproxy.ResetMidBody, faultproxy.Truncate, faultproxy.Slow}})
	res = push(p.Addr()+"/g/app:v1", "--retries", "5", "--timeout", "500ms")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, want, relDigest(t, res.stdout), "same digest as the fault-free push")

	st := p.Stats()
	require.NotEmpty(t, st.Injected, "the proxy injected faults")
	t.Logf("%d requests, faults %v", st.Requests, st.Faults)
	assert.Contains(t, res.stderr, `msg="retrying request"`)
	assert.Contains(t, res.stderr, `msg="registry retries"`, "a summary of the retries")

	ref, err := name.ParseReference(faulty + "/g/app:v1")
	require.NoError(t, err)
	desc, err := remote.Head(ref)
	require.NoError(t, err)
	assert.Equal(t, want, desc.Digest.String(), "the registry holds it under the tag")
}

// TestPushUnderPersistentFaultFailsClearly: when every manifest PUT fails,
// the push fails with one error line naming the push and the status, after
// its retries, and tags nothing.
func TestPushUnderPersistentFaultFailsClearly(t *testing.T) {
	dir := relModule(t)
	t.Chdir(dir)
	reg := relRegistry(t, "", "")
	p := relProxy(t, faultproxy.Options{Target: "http://" + reg, Persistent: true, Faults: []faultproxy.Fault{faultproxy.Status5xx},
		Match: func(r *http.Request) bool {
			return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
		}})
	res := relRun(t, t.Context(), relEnv(t), "push", "--retries", "2", "--platforms", "linux/amd64", "--base", "scratch",
		"--tag", p.Addr()+"/g/app:v1", "./cmd/app")
	assert.Equal(t, 1, res.code, res.stderr)
	assert.Empty(t, res.stdout)
	lines := relLines(res.stderr)
	require.NotEmpty(t, lines)
	last := lines[len(lines)-1]
	assert.True(t, strings.HasPrefix(last, "helperbuild: push "+p.Addr()+"/g/app@sha256:"), last)
	assert.Contains(t, last, "faultproxy: injected 50")
	assert.Equal(t, 2, strings.Count(res.stderr, `msg="retrying request"`), "2 retries, logged once each")

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
