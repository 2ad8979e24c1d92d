package verify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTableSaysWhatRan: a passing run or start-up check says in the table
// output what it ran, not only "ok" (issue 39: it was in JSON alone).
func TestTableSaysWhatRan(t *testing.T) {
	ran := "ran natively in a sandbox: /usr/bin/gitlab-runner-helper --version (OS/Arch: linux/amd64); /bin/sh -c true"
	started := "started natively in a sandbox: helper start-up (Kubernetes executor); helper start-up (Docker executor)"
	r := &Report{Digest: "sha256:" + strings.Repeat("a", 64), Platforms: []PlatformReport{
		{Platform: "linux/amd64", Digest: "sha256:" + strings.Repeat("b", 64), Checks: []Check{
			{Name: CheckArch, OK: true, Reason: "1 ELF executable"},
			{Name: CheckRun, OK: true, Reason: ran},
			{Name: CheckStart, OK: true, Reason: started},
		}},
		{Platform: "linux/arm64", Digest: "sha256:" + strings.Repeat("c", 64), Checks: []Check{
			{Name: CheckArch, OK: true, Reason: "1 ELF executable"},
			{Name: CheckRun, Reason: "/usr/bin/gitlab-runner-helper --version exited with status 1: boom"},
		}},
	}}
	var b strings.Builder
	require.NoError(t, WriteTable(&b, "oci:out:helper", r))
	out := b.String()
	assert.Contains(t, out, "\nlinux/amd64 run: "+ran+"\nlinux/amd64 start: "+started+"\n")
	assert.NotContains(t, out, "arch: 1 ELF executable", "only what ran is told; other passing checks stay in the grid")
	assert.Contains(t, out, "\nlinux/arm64 run: FAIL: /usr/bin/gitlab-runner-helper --version exited with status 1: boom\n")
	assert.Equal(t, 1, strings.Count(out, "linux/arm64 run:"), "a failed run is told once, as a failure")
}
