//go:build e2e

package e2e

import (
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
			"verify", "--run", "--platforms", platformList(targets), img.ref())
		assert.Zero(t, res.ExitCode, "verify:\n%s", res)
	})

	s.step(t, "a platform the image lacks", func(t *testing.T) {
		res := s.helperbuild(t, dir, s.helperbuildEnv(t),
			"verify", "--platforms", "linux/amd64,linux/riscv64", img.ref())
		assert.Equal(t, 1, res.ExitCode, "verify:\n%s", res)
		assert.Contains(t, res.Stdout+res.Stderr, "linux/riscv64", "verify names the missing platform")
	})
}
