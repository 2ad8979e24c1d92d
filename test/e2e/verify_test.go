//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestVerify runs `helperbuild verify` on the pushed helper: it passes for the platforms the
// image has (running each binary under emulation) and fails for a list it does not match.
func TestVerify(t *testing.T) {
	s := suiteFor(t)
	img := s.plainHelper(t)
	dir := s.exampleDir(t)

	s.step(t, "the five platforms, with --run", func(t *testing.T) {
		res := s.helperbuild(t, dir, s.helperbuildEnv(t),
			"verify", "--run", "--format", "json", "--platforms", platformList(targets), img.ref())
		assert.Zero(t, res.ExitCode, "verify:\n%s", res)
		// Every platform's programs ran, each in a sandbox: natively for amd64, under qemu for the rest.
		assert.Equal(t, 1, strings.Count(res.Stdout, "ran natively in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/amd64)"), "verify:\n%s", res)
		assert.Equal(t, len(targets)-1, strings.Count(res.Stdout, "-static in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/"), "verify:\n%s", res)
	})

	s.step(t, "--run refuses where user namespaces are disabled", func(t *testing.T) {
		// A user namespace of its own whose limit of further user namespaces is 0: the
		// kernel refuses the sandbox there, and nowhere else.
		cmd := command(t, s.helperbuildEnv(t), "unshare", "--user", "--map-root-user", "sh", "-c",
			`echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" "$@"`,
			s.helperbuildBin, "verify", "--run", "--platforms", platformList(targets), img.ref())
		cmd.Dir = dir
		res := run(t, cmd)
		assert.Equal(t, 1, res.ExitCode, "verify:\n%s", res)
		assert.Empty(t, res.Stdout, "nothing was checked")
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(res.Stderr), "\n")+1, "one line:\n%s", res.Stderr)
		assert.Contains(t, res.Stderr, "no sandbox for the image's programs")
		assert.Contains(t, res.Stderr, "so nothing was run: allow user namespaces")
	})

	s.step(t, "a platform the image lacks", func(t *testing.T) {
		res := s.helperbuild(t, dir, s.helperbuildEnv(t),
			"verify", "--platforms", "linux/amd64,linux/riscv64", img.ref())
		assert.Equal(t, 1, res.ExitCode, "verify:\n%s", res)
		assert.Contains(t, res.Stdout+res.Stderr, "linux/riscv64", "verify names the missing platform")
	})
}
