package registry

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
)

// failOnce answers the first request that match picks with a 503.
func failOnce(match func(*http.Request) bool) func(http.Handler) http.Handler {
	var once sync.Once
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			failed := false
			if match(r) {
				once.Do(func() { failed = true })
			}
			if failed {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// A Session writes and reads on the Options WithRetries returns: a 503 is
// retried by the run's retry transport, the bytes sent are counted on the
// context's counter, a blob sent once is not sent again, a tag names what
// was pushed by digest, and a missing manifest is ggcr's 404 (publish
// tells it apart). Cross-repository mounts are not seen here: ggcr's
// registry keeps one blob store for all repositories (TestConfigFreePush
// and TestFanOutRelease count them on distribution).
func TestSessionOnTheRetryStack(t *testing.T) {
	var reqs testkit.RequestLog
	manifestPut := func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
	}
	host := testkit.Registry(t, reqs.Wrap, failOnce(manifestPut))
	o, rt, err := WithRetries(imageref.Options{}, Retries{Retries: 2}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	s, err := NewSession(o)
	require.NoError(t, err)
	var sent atomic.Int64
	ctx := WithCounter(t.Context(), func(n int64) { sent.Add(n) })

	a := mustRepo(t, host+"/g/a")
	img := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 4096, 1)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.NoError(t, s.Upload(ctx, a, layers[0]))
	require.NoError(t, s.Upload(ctx, a, layers[0]))
	assert.Equal(t, 1, countPrefix(reqs.Take(), "POST /v2/g/a/blobs/uploads/"), "the second Upload of a blob sends nothing")
	assert.GreaterOrEqual(t, sent.Load(), int64(4096), "the layer's bytes are counted")

	d, err := img.Digest()
	require.NoError(t, err)
	require.NoError(t, s.Push(ctx, a.Digest(d.String()), img))
	assert.Equal(t, 1, rt.Stats().PerHost[host].Retries, "the manifest PUT's 503 was retried by the run's transport")

	require.NoError(t, s.Tag(ctx, a.Tag("v1"), img))
	desc, err := s.Head(ctx, a.Tag("v1"))
	require.NoError(t, err)
	assert.Equal(t, d, desc.Digest, "the tag names what was pushed by digest")
	got, err := s.Image(ctx, a.Tag("v1"))
	require.NoError(t, err)
	gotLayers, err := got.Layers()
	require.NoError(t, err)
	require.Len(t, gotLayers, 1)
	assert.Equal(t, mustLayerDigest(t, layers[0]), mustLayerDigest(t, gotLayers[0]))

	var terr *transport.Error
	_, err = s.Image(ctx, a.Tag("missing"))
	require.True(t, errors.As(err, &terr), "%v", err)
	assert.Equal(t, http.StatusNotFound, terr.StatusCode)
	_, err = s.Head(ctx, a.Digest("sha256:"+strings.Repeat("0", 64)))
	require.True(t, errors.As(err, &terr), "%v", err)
	assert.Equal(t, http.StatusNotFound, terr.StatusCode)
}

func mustRepo(t *testing.T, s string) name.Repository {
	t.Helper()
	r, err := name.NewRepository(s)
	require.NoError(t, err)
	return r
}

func mustLayerDigest(t *testing.T, l v1.Layer) string {
	t.Helper()
	d, err := l.Digest()
	require.NoError(t, err)
	return d.String()
}

// countPrefix counts the requests of reqs that start with prefix.
func countPrefix(reqs []string, prefix string) int {
	n := 0
	for _, r := range reqs {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// Has answers from a HEAD and the Session remembers the answer: in place,
// missing (a 404; a 403 too, as some registries answer for a missing
// manifest), or, when the registry fails otherwise, an error and nothing
// remembered.
func TestSessionHas(t *testing.T) {
	forbidden := "sha256:" + strings.Repeat("1", 64)
	broken := "sha256:" + strings.Repeat("2", 64)
	host := testkit.Registry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasSuffix(r.URL.Path, forbidden):
				w.WriteHeader(http.StatusForbidden)
			case strings.HasSuffix(r.URL.Path, broken):
				w.WriteHeader(http.StatusBadRequest) // not retried by ggcr, unlike a 5xx
			default:
				next.ServeHTTP(w, r)
			}
		})
	})
	s, err := NewSession(imageref.Options{})
	require.NoError(t, err)
	ctx := t.Context()
	a := mustRepo(t, host+"/g/a")
	img := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 256, 1)
	d, err := img.Digest()
	require.NoError(t, err)
	ref := a.Digest(d.String())

	_, known := s.Found(ref)
	assert.False(t, known, "nothing asked yet")
	in, err := s.Has(ctx, ref)
	require.NoError(t, err)
	assert.False(t, in)
	in, known = s.Found(ref)
	assert.True(t, known)
	assert.False(t, in, "remembered missing")

	require.NoError(t, s.Push(ctx, ref, img))
	in, err = s.Has(ctx, ref)
	require.NoError(t, err)
	assert.True(t, in)
	in, known = s.Found(ref)
	assert.True(t, in && known, "remembered in place")
	in, known = s.Found(mustRepo(t, host+"/g/b").Digest(d.String()))
	assert.False(t, in || known, "per repository")

	in, err = s.Has(ctx, a.Digest(forbidden))
	require.NoError(t, err)
	assert.False(t, in, "403 is missing")
	_, err = s.Has(ctx, a.Digest(broken))
	var terr *transport.Error
	require.True(t, errors.As(err, &terr), "%v", err)
	assert.Equal(t, http.StatusBadRequest, terr.StatusCode)
	_, known = s.Found(a.Digest(broken))
	assert.False(t, known, "a failure is not an answer")
}
