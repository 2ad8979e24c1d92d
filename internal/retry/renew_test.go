package retry

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jwt is a token whose payload says exp, as a registry's token service
// signs it (the signature is not read).
func jwt(exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"ES256"}`)) + "." + enc(fmt.Appendf(nil, `{"exp":%d}`, exp.Unix())) + ".sig"
}

func TestTokenExpiry(t *testing.T) {
	exp := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		auth string
		ok   bool
	}{
		{"Bearer " + jwt(exp), true},
		{"Basic dTpw", false},
		{"Bearer opaque-token", false},
		{"Bearer a.!!!.c", false},
		{"Bearer " + base64.RawURLEncoding.EncodeToString([]byte(`{}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"x"}`)) + ".s", false},
	} {
		got, ok := tokenExpiry(c.auth)
		assert.Equal(t, c.ok, ok, c.auth)
		if c.ok {
			assert.True(t, got.Equal(exp), "%s: %s", c.auth, got)
		}
	}
}

// A request whose body cannot be read again, sent again by the auth layer
// after a 401 (as go-containerregistry's bearer transport does), is not
// sent with what is left of its body: it fails with errBodySpent, which
// the upload predicate answers by restarting the blob upload.
func TestSpentBodyIsNotSentAgain(t *testing.T) {
	var got []string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, fmt.Sprintf("%s %d", r.Method, len(b)))
		w.WriteHeader(http.StatusUnauthorized)
	})
	tr, err := New(nil, DefaultOptions())
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPatch, srv.URL+"/v2/a/blobs/uploads/1", io.NopCloser(strings.NewReader("layer data")))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp.Body.Close()

	_, err = tr.RoundTrip(req) // the auth layer, with a new token
	require.ErrorIs(t, err, errBodySpent)
	assert.Equal(t, []string{"PATCH 10"}, got, "nothing sent the second time")
	assert.True(t, tr.restartUpload(err), "the upload is restarted")
	assert.Equal(t, 1, tr.Stats().Challenges)
}

// A body that can be read again goes out whole the second time.
func TestBodyIsSentWholeAfterA401(t *testing.T) {
	var got []string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
		if n == 0 {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	opts := DefaultOptions()
	opts.Timeout = time.Minute // the command's default has one: each attempt's body is wrapped
	tr, err := New(nil, opts)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/v2/a/manifests/v1", strings.NewReader(`{"manifest":1}`))
	require.NoError(t, err)
	for range 2 {
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	assert.Equal(t, []string{`{"manifest":1}`, `{"manifest":1}`}, got)
	assert.Equal(t, 1, tr.Stats().Resent)
}

// Before a blob's data whose token expires within renewMargin, the upload
// is asked for with the same token; a 401 there is the data request's
// answer, its body unread, and when the auth layer sends it again with a
// new token it goes out without another check.
func TestStaleTokenIsCheckedBeforeBlobData(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	stale, fresh := jwt(now.Add(10*time.Second)), jwt(now.Add(5*time.Minute))
	var got []string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		b, _ := io.ReadAll(r.Body)
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		which := map[string]string{stale: "stale", fresh: "fresh"}[tok]
		got = append(got, fmt.Sprintf("%s %s %d", r.Method, which, len(b)))
		if tok != fresh {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	opts := DefaultOptions()
	opts.Now = func() time.Time { return now }
	tr, err := New(nil, opts)
	require.NoError(t, err)
	patch := func(tok string) *http.Request {
		req, err := http.NewRequest(http.MethodPatch, srv.URL+"/v2/a/blobs/uploads/1?_state=x", io.NopCloser(strings.NewReader("layer data")))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		return req
	}

	req := patch(stale)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp.Body.Close()
	req.Header.Set("Authorization", "Bearer "+fresh) // the auth layer's new token
	resp, err = tr.RoundTrip(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	resp.Body.Close()
	assert.Equal(t, []string{"GET stale 0", "PATCH fresh 10"}, got, "the data went out once, with the new token")

	got = nil
	resp, err = tr.RoundTrip(patch(fresh))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, []string{"PATCH fresh 10"}, got, "a token far from its expiry is not checked")
	st := tr.Stats()
	assert.Equal(t, 1, st.Checked)
	assert.Equal(t, 1, st.Challenges)
	assert.False(t, errors.Is(err, errBodySpent))
}
