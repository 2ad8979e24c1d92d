package registry

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// An --insecure-registry value without the port matches nothing (the
// match is exact): the run says so and names the HOST:PORT it reached
// (issue 25: registry.nu.test for registry.nu.test:5077 was silent).
func TestWarnUnusedInsecure(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	warnings := func(insecure []string, send bool) string {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
		_, rt, err := WithRetries(imageref.Options{Insecure: insecure}, Retries{}, log)
		require.NoError(t, err)
		if send {
			resp, err := (&http.Client{Transport: rt}).Get(srv.URL + "/v2/")
			require.NoError(t, err)
			resp.Body.Close()
		}
		WarnUnusedInsecure(log, rt, insecure)
		return logs.String()
	}
	assert.Empty(t, warnings([]string{host}, true), "an exact match")
	assert.Equal(t, `level=WARN msg="--insecure-registry 127.0.0.1 matches no registry this run reached: it reached `+host+`; give HOST:PORT exactly, e.g. --insecure-registry `+host+`"`+"\n",
		warnings([]string{"127.0.0.1"}, true))
	assert.Equal(t, `level=WARN msg="--insecure-registry registry.example.test:5000 matches no registry this run reached (`+host+`)"`+"\n",
		warnings([]string{host, "registry.example.test:5000"}, true))
	assert.Empty(t, warnings([]string{"127.0.0.1"}, false), "no request, nothing to compare with")
}

func TestInsecureOnlyForNamedHosts(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	get := func(o imageref.Options) error {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v2/", nil)
		resp, err := HTTPTransport(o).RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	assert.Error(t, get(imageref.Options{}), "self-signed certificate is refused by default")
	assert.Error(t, get(imageref.Options{Insecure: []string{"other.example.com"}}), "naming another host changes nothing")
	assert.NoError(t, get(imageref.Options{Insecure: []string{host}}))
}
