package registry

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExplain(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "https://registry.example.com/v2/g/app/blobs/uploads/?_state=x", nil)
	require.NoError(t, err)
	denied := &transport.Error{StatusCode: http.StatusForbidden, Request: req, Errors: []transport.Diagnostic{
		{Code: transport.DeniedErrorCode, Message: "requested access to the resource is denied", Detail: map[string]any{"Type": "repository"}}}}
	refused := &url.Error{Op: "Get", URL: "https://registry.example.com:5000/v2/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("connect: %w", syscall.ECONNREFUSED)}}

	tests := []struct {
		err  error
		kind ErrorKind
		want string
	}{
		{fmt.Errorf("push: %w", denied), Unauthorized, "registry.example.com denied access (DENIED: requested access to the resource is denied)"},
		{&transport.Error{StatusCode: http.StatusUnauthorized, Request: req}, Unauthorized, "authentication failed for registry.example.com (401 Unauthorized)"},
		{refused, Unreachable, "cannot reach registry registry.example.com:5000: connection refused; check the address and that the registry is up"},
		{&url.Error{Op: "Get", URL: "https://nope.invalid/v2/", Err: &net.DNSError{Name: "nope.invalid", IsNotFound: true}}, Unreachable, "cannot reach registry nope.invalid: no such host nope.invalid; check the address and that the registry is up"},
	}
	for _, tt := range tests {
		got := Explain(tt.err)
		var re *RegistryError
		require.True(t, errors.As(got, &re), "%v", tt.err)
		assert.Equal(t, tt.kind, re.Kind)
		assert.Equal(t, tt.want, got.Error())
		assert.ErrorIs(t, got, tt.err, "unwraps to the original")
		assert.Same(t, got, Explain(got), "explained once")
	}
	plain := errors.New("manifest unknown")
	assert.Same(t, plain, Explain(plain))
	assert.NoError(t, Explain(nil))
}

// A registry that speaks only HTTP, asked over HTTPS: the error names the
// exact flag to add, HOST:PORT included (issue 25: it said only
// "http: server gave HTTP response to HTTPS client").
func TestExplainPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	resp, err := http.Get("https://" + host + "/v2/")
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	got := Explain(fmt.Errorf("read: %w", err))
	var re *RegistryError
	require.True(t, errors.As(got, &re), "%v", err)
	assert.Equal(t, PlainHTTP, re.Kind)
	assert.Equal(t, host+" answered in plain HTTP, not HTTPS: if it only speaks HTTP, pass --insecure-registry "+host+" (127.0.0.1 and localhost need no flag)", got.Error())
}

// A ping that went on in plain HTTP (loopback) and got a status is about
// that status, not about the plain-HTTP answer to its HTTPS attempt.
func TestExplainPlainHTTPThenStatus(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:5000/v2/", nil)
	require.NoError(t, err)
	err = errors.Join(errors.New(`Get "https://127.0.0.1:5000/v2/": http: server gave HTTP response to HTTPS client`),
		&transport.Error{StatusCode: http.StatusTooManyRequests, Request: req})
	var re *RegistryError
	require.True(t, errors.As(Explain(err), &re), "%v", Explain(err))
	assert.Equal(t, Answered, re.Kind)
	assert.Equal(t, "GET http://127.0.0.1:5000/v2/: 429 Too Many Requests", re.Error())
}

// A manifest put refused as distribution v3 refuses a foreign layer's URL
// by default (400 MANIFEST_BLOB_UNKNOWN naming the layer) is explained
// with the registry setting; a blob upload's BLOB_UNKNOWN is not.
func TestExplainForeignLayerURLs(t *testing.T) {
	put, err := http.NewRequest(http.MethodPut, "http://127.0.0.1:5000/v2/w/helper/manifests/v1", nil)
	require.NoError(t, err)
	refused := &transport.Error{StatusCode: http.StatusBadRequest, Request: put, Errors: []transport.Diagnostic{
		{Code: transport.ManifestBlobUnknownErrorCode, Message: "blob unknown to registry", Detail: "sha256:f0f0"}}}
	got := Explain(fmt.Errorf("push: %w", refused)).Error()
	assert.True(t, strings.HasPrefix(got, "PUT http://127.0.0.1:5000/v2/w/helper/manifests/v1: MANIFEST_BLOB_UNKNOWN: blob unknown to registry (if sha256:f0f0 is a foreign layer"), got)
	assert.Contains(t, got, `validation: manifests: urls: allow: ['^https://mcr\.microsoft\.com/']`)
	assert.Contains(t, got, "MCR or Docker Hub")

	upload, err := http.NewRequest(http.MethodPut, "http://127.0.0.1:5000/v2/w/helper/blobs/uploads/x", nil)
	require.NoError(t, err)
	other := &transport.Error{StatusCode: http.StatusBadRequest, Request: upload, Errors: []transport.Diagnostic{
		{Code: transport.BlobUnknownErrorCode, Message: "blob unknown to registry"}}}
	assert.NotContains(t, Explain(other).Error(), "validation")
	manifestInvalid := &transport.Error{StatusCode: http.StatusBadRequest, Request: put, Errors: []transport.Diagnostic{
		{Code: transport.ManifestInvalidErrorCode, Message: "manifest invalid"}}}
	assert.NotContains(t, Explain(manifestInvalid).Error(), "validation")
}
