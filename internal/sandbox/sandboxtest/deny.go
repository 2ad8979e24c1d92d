package sandboxtest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// denyEnv marks a test binary re-executed by RunWithoutUserNamespaces.
const denyEnv = "HELPERBUILD_TEST_NO_USER_NAMESPACES"

// DenyIfAsked is for TestMain, before m.Run, with the process environment:
// in a binary that RunWithoutUserNamespaces started, it sets this user
// namespace's user.max_user_namespaces to 0, so the kernel refuses every new
// user namespace in this process and its children (and nowhere else).
func DenyIfAsked(environ []string) error {
	if !Denied(environ) {
		return nil
	}
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0); err != nil {
		return fmt.Errorf("refuse user namespaces: %w", err)
	}
	return nil
}

// Denied reports, given the process environment, whether this test runs
// where user namespaces are refused.
func Denied(environ []string) bool { return slices.Contains(environ, denyEnv+"=1") }

// RunWithoutUserNamespaces runs the calling test again in a copy of the test
// binary started in a user namespace of its own (root inside, mapped to the
// caller) whose limit of further user namespaces is 0, and fails t when that
// run fails; environ is the process environment, passed on. The test's body
// checks Denied to know which run it is in.
func RunWithoutUserNamespaces(t *testing.T, environ []string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(slices.Clip(environ), denyEnv+"=1")
	cmd.SysProcAttr = ownUserNamespace()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s without user namespaces: %v\n%s", t.Name(), err, out)
	}
	t.Logf("%s without user namespaces:\n%s", t.Name(), out)
}
