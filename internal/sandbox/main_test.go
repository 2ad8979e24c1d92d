package sandbox

import (
	"fmt"
	"os"
	"testing"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

// adversaries holds the adversary built for "amd64" and "arm64" (run under
// qemu, which the unit tests need); read-only after TestMain.
var adversaries = map[string]string{}

func TestMain(m *testing.M) {
	if code, ok := Init(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if err := sandboxtest.DenyIfAsked(os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Getenv(parentEnv) != "" {
		// TestParentDeathEndsTheSandbox's parent is killed: it makes nothing to clean up.
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "sandbox-bins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if _, err := testkit.LookTool("qemu-aarch64-static"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if adversaries[arch], err = sandboxtest.BuildAdversary(dir, arch, os.Environ()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	// TestParentDeathEndsTheSandbox's parent could not remove its run's cgroup.
	if p, err := findCgroup(); err == nil {
		sweepCgroups(p)
	}
	return code
}
