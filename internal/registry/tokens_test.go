package registry

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
)

// bodyLog records, for each request that carries a body, whether the body
// that arrived was whole (its length equals Content-Length, or it is not
// empty when sent chunked), and counts blob data (PATCH) bytes by path.
type bodyLog struct {
	mu      sync.Mutex
	short   []string
	patched int64
}

func (b *bodyLog) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut && r.Method != http.MethodPatch && r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		if r.ContentLength > 0 && int64(len(body)) != r.ContentLength || r.ContentLength < 0 && len(body) == 0 {
			b.short = append(b.short, r.Method+" "+r.URL.Path)
		}
		if r.Method == http.MethodPatch {
			b.patched += int64(len(body))
		}
		b.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// Every writer of a release, on a registry whose tokens are good for one
// request only (as GitLab's five-minute tokens are for a release that
// compiles longer than that): each request meets an expired token, the
// auth layer renews it and sends the request again, and every request
// that carries a body carries it whole the second time. A blob's data goes
// out once: the token is checked before it is sent.
func TestWritersUnderTokensThatExpireBetweenRequests(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_800_000_000, 0))
	tokens := &testkit.Tokens{User: "gitlab-ci-token", Password: "job-token-s3cret", Lifetime: time.Minute, Step: time.Minute, Clock: clock}
	var bodies bodyLog
	var reqs testkit.RequestLog
	// bodies sees every request as it arrives, refused or not: what went
	// over the wire.
	host := testkit.Registry(t, reqs.Wrap, tokens.Wrap, bodies.Wrap)

	kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: tokens.User, Password: tokens.Password})}
	o, rt, err := WithRetries(imageref.Options{Keychain: kc}, Retries{Retries: 3, Timeout: time.Minute, Now: clock.Now}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	s, err := NewSession(o)
	require.NoError(t, err)
	ctx := context.Background()
	repo := mustRepo(t, host+"/group/helper")

	img := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "arm64"}, 64<<10, 2)
	layers, err := img.Layers()
	require.NoError(t, err)
	var layerBytes int64
	for _, l := range layers {
		require.NoError(t, s.Upload(ctx, repo, l), "blob upload (POST, PATCH, PUT)")
		size, err := l.Size()
		require.NoError(t, err)
		layerBytes += size
	}
	d, err := img.Digest()
	require.NoError(t, err)
	require.NoError(t, s.Push(ctx, repo.Digest(d.String()), img), "image by digest: config blob, manifest PUT")
	require.NoError(t, s.Tag(ctx, repo.Tag("v1"), img), "tag PUT")

	// A referrer and a fallback tag, as publish and signing write them.
	manifest, err := img.RawManifest()
	require.NoError(t, err)
	require.NoError(t, s.PutManifest(ctx, repo, "sha256-"+d.Hex, types.OCIManifestSchema1, manifest), "raw manifest PUT")
	got, _, found, err := s.GetManifest(ctx, repo, "sha256-"+d.Hex)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, manifest, got)
	_, err = s.HasReferrersAPI(ctx, repo, d)
	require.NoError(t, err)
	has, err := s.Has(ctx, repo.Digest(d.String()))
	require.NoError(t, err)
	assert.True(t, has)

	issued, refused := tokens.Issued()
	st := rt.Stats()
	t.Logf("requests let through: %d, 401s: %d, tokens issued: %d, resent with their body: %d, token checks: %d",
		len(reqs.Take()), refused, issued, st.Resent, st.Checked)
	assert.Empty(t, bodies.short, "requests that arrived without their whole body")
	assert.Equal(t, layerBytes+configSize(t, img), bodies.patched, "each blob's data sent once")
	assert.GreaterOrEqual(t, refused, 8, "the registry refused expired tokens throughout")
	assert.Equal(t, refused, st.Challenges, "every 401 was seen by the retry transport")
	assert.GreaterOrEqual(t, st.Resent, 2, "manifest PUTs were sent again with their body")
	assert.GreaterOrEqual(t, st.Checked, 3, "each blob's token was checked before its data")
	assert.Zero(t, st.Total(), "no retries: a 401 is the auth layer's to answer")
}

func configSize(t *testing.T, img v1.Image) int64 {
	t.Helper()
	raw, err := img.RawConfigFile()
	require.NoError(t, err)
	return int64(len(raw))
}

// The token check is made only for a blob's data whose JWT is about to
// expire: with tokens good for an hour nothing is checked and nothing
// refused after the first token.
func TestLongLivedTokensAreNotChecked(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_800_000_000, 0))
	tokens := &testkit.Tokens{User: "u", Password: "p", Lifetime: time.Hour, Step: time.Second, Clock: clock}
	host := testkit.Registry(t, tokens.Wrap)
	kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: "u", Password: "p"})}
	o, rt, err := WithRetries(imageref.Options{Keychain: kc}, Retries{Retries: 3, Timeout: time.Minute, Now: clock.Now}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	s, err := NewSession(o)
	require.NoError(t, err)
	img := testkit.Image(t, v1.Platform{OS: "linux", Architecture: "amd64"}, 4096, 1)
	d, err := img.Digest()
	require.NoError(t, err)
	require.NoError(t, s.Push(context.Background(), mustRepo(t, host+"/g/a").Digest(d.String()), img))
	st := rt.Stats()
	assert.Zero(t, st.Checked)
	assert.Zero(t, st.Resent)
	_, refused := tokens.Issued()
	assert.LessOrEqual(t, refused, 1, "only the ping before the first token: %d", refused)
	assert.False(t, strings.Contains(st.String(), "retries ("), st.String())
}

// ReportRetries says how long the run waited before retries and, with -v,
// how many 401s were answered with new credentials.
func TestReportRetriesSaysWaitsAndRenewals(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_800_000_000, 0))
	tokens := &testkit.Tokens{User: "u", Password: "p", Lifetime: time.Minute, Step: time.Minute, Clock: clock}
	var n int
	host := testkit.Registry(t, tokens.Wrap, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n++; n == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: "u", Password: "p"})}
	o, rt, err := WithRetries(imageref.Options{Keychain: kc}, Retries{Retries: 2, Now: clock.Now}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	s, err := NewSession(o)
	require.NoError(t, err)
	_, err = s.Has(context.Background(), mustRepo(t, host+"/g/a").Digest("sha256:"+strings.Repeat("0", 64)))
	require.NoError(t, err)

	var buf bytes.Buffer
	ReportRetries(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})), rt)
	assert.Contains(t, buf.String(), `level=WARN msg="registry retries, every request to the host together" host=`+host+` retries=1 last="status 429"`)
	assert.Contains(t, buf.String(), `level=WARN msg="waited before retrying" total=`)
	assert.Regexp(t, `level=INFO msg="registry asked for new credentials" 401s=[1-9]`, buf.String())
}
