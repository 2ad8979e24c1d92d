//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReferenceNotFound asks the real registry (CNCF distribution) for a tag
// and a digest it does not hold: exit 3, distinct from a failed check's 1,
// and one line with the registry's code, not go-containerregistry's Go map
// of the error's detail (`map[Tag:v9.9.9]`, issue 25).
func TestReferenceNotFound(t *testing.T) {
	s := suiteFor(t)
	zero := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct{ name, ref string }{
		{"a tag", s.plain.ref(baseRepo + ":v9.9.9")},
		{"a digest", s.plain.Host + "/" + baseRepo + "@" + zero},
		{"a repository", s.plain.ref("no/such/repo:v1")},
	} {
		s.step(t, tc.name, func(t *testing.T) {
			res := s.helperbuild(t, t.TempDir(), s.helperbuildEnv(t), "verify", tc.ref)
			assert.Equal(t, 3, res.ExitCode, "verify:\n%s", res)
			assert.Empty(t, res.Stdout)
			assert.Equal(t, "helperbuild: "+tc.ref+": not found in the registry (MANIFEST_UNKNOWN: manifest unknown); check the repository and the tag or digest, or publish it first\n", res.Stderr)
		})
	}
}
