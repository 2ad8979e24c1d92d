package sign

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// noRoute fails every request as a resolver without the host does, and
// records what was asked.
func noRoute(asked *[]string) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		*asked = append(*asked, r.URL.String())
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: r.URL.Hostname(), IsNotFound: true}}
	})
}

// Reachable asks the log (and, keyless, the CA) once, without retries,
// and names the service that did not answer; any HTTP answer, even a 503,
// is one.
func TestReachable(t *testing.T) {
	k, err := GenerateKey()
	require.NoError(t, err)
	keyed, err := New(Options{Key: k, RekorURL: "https://rekor.sigstore.dev"})
	require.NoError(t, err)
	var asked []string
	err = keyed.Reachable(context.Background(), noRoute(&asked), 0)
	var ue *UnreachableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, ServiceLog, ue.Service)
	assert.Equal(t, "the transparency log https://rekor.sigstore.dev does not answer: dial tcp: lookup rekor.sigstore.dev: no such host", err.Error())
	assert.Equal(t, []string{"https://rekor.sigstore.dev/api/v1/log"}, asked, "one request, no retries, no CA for a key")

	noLog, err := New(Options{Key: k})
	require.NoError(t, err)
	asked = nil
	assert.NoError(t, noLog.Reachable(context.Background(), noRoute(&asked), 0), "--sign-tlog none: nothing to reach")
	assert.Empty(t, asked)

	iss := newIssuer(t)
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(busy.Close)
	keyless, err := New(Options{IDToken: iss.token(t, testIdentity, time.Now().Add(time.Hour)), FulcioURL: "https://fulcio.example.test", RekorURL: busy.URL})
	require.NoError(t, err)
	asked = nil
	viaBusy := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "fulcio.example.test" {
			return noRoute(&asked).RoundTrip(r)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	err = keyless.Reachable(context.Background(), viaBusy, 0)
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, ServiceCA, ue.Service, "the log answered 503, an answer; the CA did not")
	assert.Equal(t, []string{"https://fulcio.example.test/api/v2/configuration"}, asked)

	// A service that never answers is given up at the timeout.
	hang := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		<-r.Context().Done()
		return nil, r.Context().Err()
	})
	err = keyed.Reachable(context.Background(), hang, time.Millisecond)
	require.ErrorAs(t, err, &ue)
	assert.ErrorContains(t, err, "no answer within 1ms")
	assert.False(t, errors.Is(err, context.Canceled))
}
