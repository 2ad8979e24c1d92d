package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// distributionNotFound answers as CNCF distribution (docker-registry 2.8)
// does for a manifest it does not hold: 404, MANIFEST_UNKNOWN, and a
// detail object that go-containerregistry would print as a Go map. The
// bodies are the ones the registry sent for the tag v9.9.9 and the digest
// sha256:00…00 of group/helper.
func distributionNotFound(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Docker-Distribution-Api-Version", "registry/2.0")
		if r.URL.Path == "/v2/" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write([]byte("{}"))
			return
		}
		if strings.Contains(r.URL.Path, "/blobs/uploads/") { // index's check of push permission
			status := http.StatusNoContent // the DELETE of that upload
			if r.Method == http.MethodPost {
				w.Header().Set("Location", "/v2/group/all/blobs/uploads/u1")
				status = http.StatusAccepted
			}
			w.WriteHeader(status)
			return
		}
		repo, ref, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/manifests/")
		if !ok {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		detail := `{"Tag":"` + ref + `"}`
		if strings.HasPrefix(ref, "sha256:") {
			detail = `{"Name":"` + repo + `","Revision":"` + ref + `"}`
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":` + detail + `}]}` + "\n"))
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestReferenceNotFound: a tag or digest the registry (or a layout) does
// not hold exits 3, not 1 like a failed check, with one line that names
// the reference and the registry's code, never go-containerregistry's
// `map[Tag:v9.9.9]` (issue 25).
func TestReferenceNotFound(t *testing.T) {
	host := distributionNotFound(t)
	zero := "sha256:" + strings.Repeat("0", 64)
	layout := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, os.MkdirAll(layout, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(layout, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(layout, "index.json"), []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`), 0o644))
	way := "; check the repository and the tag or digest, or publish it first"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"verify a tag", []string{"verify", host + "/group/helper:v9.9.9"},
			host + "/group/helper:v9.9.9: not found in the registry (MANIFEST_UNKNOWN: manifest unknown)" + way},
		{"verify a digest", []string{"verify", "--format", "json", host + "/group/helper@" + zero},
			host + "/group/helper@" + zero + ": not found in the registry (MANIFEST_UNKNOWN: manifest unknown)" + way},
		{"index of a missing source", []string{"index", "--tag", host + "/group/all:v1", host + "/group/helper:v9.9.9"},
			"source " + host + "/group/helper:v9.9.9: not found in the registry (MANIFEST_UNKNOWN: manifest unknown)" + way},
		{"verify a layout's missing entry", []string{"verify", "oci:" + layout + ":v9.9.9"},
			"oci:" + layout + ":v9.9.9: no entry named \"v9.9.9\" in the layout (it has [])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := relRun(t, t.Context(), relEnv(t), tc.args...)
			assert.Equal(t, exitNotFound, res.code, "stderr:\n%s", res.stderr)
			assert.Equal(t, "helperbuild: "+tc.want, errorLineOf(t, res))
			assert.Empty(t, res.stdout)
		})
	}
}

// TestExitCodesInHelp: the exit codes are documented where a user looks
// first, and the one for a missing reference is the one Run returns.
func TestExitCodesInHelp(t *testing.T) {
	res := relRun(t, t.Context(), relEnv(t), "--help")
	require.Zero(t, res.code)
	help := strings.Join(strings.Fields(res.stdout), " ")
	assert.Contains(t, help, "Exit codes: 0 done; 1 failed (a check, a build, the registry); 2 usage error (a flag, or an output that cannot be written: nothing was done); 3 a reference not found")
	assert.Equal(t, 3, exitNotFound)
}
