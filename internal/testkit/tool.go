package testkit

import (
	"fmt"
	"os/exec"
	"testing"
)

// toolPackages names the Debian package of each host tool a unit test runs;
// `make unit` installs them first (scripts/install-test-deps.sh unit).
var toolPackages = map[string]string{
	"qemu-aarch64-static": "qemu-user-static",
	"gcc":                 "gcc",
	"git":                 "git",
}

// LookTool returns the path of the host tool name, or an error naming the
// package that provides it and the script that installs it.
func LookTool(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err == nil {
		return path, nil
	}
	pkg, ok := toolPackages[name]
	if !ok {
		return "", fmt.Errorf("%s not found, and it is no tool make unit installs: add it to testkit's toolPackages and to scripts/install-test-deps.sh unit", name)
	}
	return "", fmt.Errorf("%s not found: the unit tests need it; make unit installs it (scripts/install-test-deps.sh unit, as root: apt-get install %s)", name, pkg)
}

// Tool returns the path of the host tool name, failing t when it is
// missing: a test that needs a tool never passes by skipping.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := LookTool(name)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
