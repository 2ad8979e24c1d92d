//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeployTokenCannotPush: a read-only deploy token (GitLab's read_registry) on a
// token-auth registry: push is refused before anything compiles, exit 1, one line that
// names the push scope, the user and what the token grants; nothing in the repository,
// no secret in the output.
func TestDeployTokenCannotPush(t *testing.T) {
	s := suiteFor(t)
	r := s.startAuthRegistry(t, registryImpls[1], authToken, authRegistryOptions{})
	s.step(t, "push with a read-only deploy token: refused before compiling", func(t *testing.T) {
		env := s.helperbuildEnv(t, "CI_REGISTRY="+r.Host, "CI_REGISTRY_USER="+r.DeployUser, "CI_REGISTRY_PASSWORD="+r.DeployPassword)
		// The base from the layout: the refusal must be the push's, not a read's.
		res := s.helperbuild(t, s.exampleDir(t), env, "push", "--platforms", platformList(matrixTargets),
			"--base", s.base.ociRef(), "--ldflags", exampleLdflags, "--tag", r.ref(jobProject+"/deploy:v1"), helperPackage)
		assert.Equal(t, 1, res.ExitCode, "%s", res)
		assert.Contains(t, res.Stderr, "push to "+jobProject+"/deploy needs the push scope; the token for "+r.DeployUser+" grants only pull there")
		assert.NotContains(t, res.Stderr, "compiled", "nothing compiled")
		assert.Len(t, errorLines(res.Stderr), 1, "one error line:\n%s", res.Stderr)
		assertNoSecret(t, res, r.secrets()...)
		st := r.Tokens.Stats()
		assert.Positive(t, st.Issued, "the realm issued (pull-only) tokens")
		assert.Zero(t, st.Refused, "the credentials themselves were right")
	})
}

// errorLines are the lines of stderr that report the failure ("helperbuild: ...").
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "helperbuild: ") {
			out = append(out, l)
		}
	}
	return out
}
