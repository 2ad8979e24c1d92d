//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/test/faultproxy"
)

// TestReferrersAPIAnsweredWrongly: `push --attest referrers` to distribution v3 (which has
// no referrers API and answers the route 404) through a front that answers the referrers
// route itself, wrongly: a 200 page that is no referrers index counts as no API (the
// fallback tags are written, as with the registry's own 404), and so does an API that
// answers an empty list, lacking the referrers the push just put there; a 500 fails the
// release before any tag moves, naming the referrers route.
func TestReferrersAPIAnsweredWrongly(t *testing.T) {
	s := suiteFor(t)
	for _, tc := range []struct {
		name   string
		status int
		body   string // "" with 0: the registry's own answer
		ok     bool
	}{
		{"the registry's own 404", 0, "", true},
		{"a 200 HTML page", http.StatusOK, "<html><body>Sign in</body></html>", true},
		{"a 500", http.StatusInternalServerError, `{"errors":[{"code":"UNKNOWN","message":"referrers broke"}]}`, false},
		// An API that lists nothing, not even what the push just put there: the
		// referrers would be findable by nobody without the fallback tags.
		{"an empty referrers index", http.StatusOK, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.startAuthRegistry(t, registryImpls[1], authAnonymous, authRegistryOptions{})
			var answered atomic.Int32
			front, err := faultproxy.Start(faultproxy.Options{Target: r.Proxy.URL(), Intercept: func(w http.ResponseWriter, req *http.Request) bool {
				if tc.status == 0 || !strings.Contains(req.URL.Path, "/referrers/sha256:") {
					return false
				}
				answered.Add(1)
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
				return true
			}})
			require.NoError(t, err)
			t.Cleanup(front.Close)
			host := strings.Replace(front.Addr(), "127.0.0.1", "localhost", 1)
			repo := jobProject + "/attested"
			md := metadataPath(t)
			res := s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "push", "--platforms", platformList(matrixTargets),
				"--base", r.ref(baseRepo+":"+baseTag), "--ldflags", exampleLdflags, "--attest", "referrers",
				"--retries", "1", "--tag", host+"/"+repo+":"+exampleVersion, "--metadata-file", md, helperPackage)
			tags := tagsOf(t, &registry{Host: r.Direct}, repo)
			if !tc.ok {
				assert.Equal(t, 1, res.ExitCode, "%s", res)
				assert.Contains(t, res.Stderr, "referrers of ")
				assert.Positive(t, answered.Load(), "the front answered the referrers route")
				assert.NotContains(t, tags, exampleVersion, "no tag moved")
				return
			}
			require.Zero(t, res.ExitCode, "%s", res)
			if tc.status != 0 {
				assert.Positive(t, answered.Load(), "the front answered the referrers route")
			}
			assert.Contains(t, tags, exampleVersion)
			for _, p := range readMetadata(t, md).image(t, "").Platforms {
				assert.Contains(t, tags, "sha256-"+strings.TrimPrefix(p.Digest, "sha256:"), "the fallback tag of %s", p.Platform)
			}
		})
	}
}
