//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlainHTTPRegistryHints asks the plain registry under a name that is not
// localhost (registry.example.test, on loopback through an /etc/hosts of the
// command's own mount namespace): helperbuild must name the exact
// --insecure-registry HOST:PORT to add, and say when a value given without
// the port matched nothing (issue 25).
func TestPlainHTTPRegistryHints(t *testing.T) {
	s := suiteFor(t)
	_, port, ok := strings.Cut(s.plain.Host, ":")
	require.True(t, ok, s.plain.Host)
	host := "registry.example.test:" + port
	hosts := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("127.0.0.1 localhost registry.example.test\n"), 0o644))
	verify := func(t *testing.T, extra ...string) result {
		args := append([]string{"unshare", "-m", "sh", "-c", `mount --bind "$0" /etc/hosts && exec "$@"`, hosts,
			s.helperbuildBin, "verify"}, extra...)
		return run(t, command(t, s.helperbuildEnv(t), append(args, host+"/"+baseRepo+":"+baseTag)...))
	}
	hint := host + " answered in plain HTTP, not HTTPS: if it only speaks HTTP, pass --insecure-registry " + host
	s.step(t, "no flag: the error names the flag to add", func(t *testing.T) {
		res := verify(t)
		assert.NotZero(t, res.ExitCode, "verify:\n%s", res)
		assert.Contains(t, res.Stderr, hint, "verify:\n%s", res)
		assert.NotContains(t, res.Stderr, "server gave HTTP response to HTTPS client", "net/http's words are replaced")
	})
	s.step(t, "the flag without the port: a warning names HOST:PORT", func(t *testing.T) {
		res := verify(t, "--insecure-registry", "registry.example.test")
		assert.NotZero(t, res.ExitCode, "verify:\n%s", res)
		assert.Contains(t, res.Stderr, hint, "verify:\n%s", res)
		assert.Contains(t, res.Stderr, "--insecure-registry registry.example.test matches no registry this run reached: it reached "+host+"; give HOST:PORT exactly, e.g. --insecure-registry "+host, "verify:\n%s", res)
	})
	s.step(t, "the flag with the port: no hint, no warning", func(t *testing.T) {
		res := verify(t, "--insecure-registry", host)
		assert.Zero(t, res.ExitCode, "verify:\n%s", res)
		assert.NotContains(t, res.Stderr, "plain HTTP", "verify:\n%s", res)
		assert.NotContains(t, res.Stderr, "matches no registry", "verify:\n%s", res)
	})
}
