package verify

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// Each system call the sandbox's filter denies, made by an image's program
// (natively for amd64, under qemu for arm64), is refused and fails the run
// check with what the program saw; a program whose 50 children want 100 MiB
// each fails it at the run's total memory limit (amd64); nothing reaches
// the host.
func TestRunDeniedCallsAndMemory(t *testing.T) {
	needQemu(t)
	if _, err := (&sandbox.Runner{}).TotalLimits(); err != nil {
		t.Fatalf("this test needs a cgroup for the runs (root, cgroup v2 with memory and pids delegated, or v1): %v", err)
	}
	h := sandboxtest.NewHost(t)
	calls := map[string][]sandboxtest.DeniedCall{"linux/amd64": sandboxtest.DeniedCalls("amd64"), "linux/arm64": sandboxtest.DeniedCalls("arm64")}
	// fork-memory runs natively only: under qemu it takes twice as long and
	// the sandbox's own test has it.
	names := func(cs []sandboxtest.DeniedCall, extra ...string) []string {
		out := extra
		for _, c := range cs {
			out = append(out, "sys-"+c.Name)
		}
		return out
	}
	idx := roundTrip(t, sandboxtest.Index(t,
		sandboxtest.AttackImage(t, amd64, adversaries["amd64"], h.Env(), names(calls["linux/amd64"], "fork-memory")...),
		sandboxtest.AttackImage(t, arm64, adversaries["arm64"], h.Env(), names(calls["linux/arm64"])...)))
	tr := &sandboxtest.Tracker{}
	// The timeout only stops a broken test: every program ends by itself.
	versions := attackPaths(append(names(calls["linux/amd64"], "fork-memory"), names(calls["linux/arm64"])...)...)
	r, err := Index(context.Background(), idx, Options{Run: true, Versions: versions, TempDir: t.TempDir(), Jobs: 1, RunTimeout: 5 * time.Minute,
		RunLimits: sandbox.Limits{Memory: 512 << 20, Processes: 1000}, Sandbox: &sandbox.Runner{Started: tr.Started}})
	require.NoError(t, err)
	got := runChecks(r)
	// Which process the kernel kills first at the limit is its choice (on
	// a busy machine the parent too): the program then ends killed rather
	// than exiting 1; the verdict is the same.
	memory := regexp.MustCompile(`^FAIL linux/amd64: /usr/bin/fork-memory --version: the run reached its total memory limit of 512 MiB: ` +
		`the kernel killed [1-9][0-9]* of its processes \((exit status 1|signal: killed)\)$`)
	var memoryFindings int
	for _, line := range got {
		if memory.MatchString(line) {
			memoryFindings++
			continue
		}
		p, rest, _ := strings.Cut(strings.TrimPrefix(line, "FAIL "), ": ")
		prog, out, _ := strings.Cut(rest, " --version exited with status 1: ")
		name := strings.TrimPrefix(prog, "/usr/bin/sys-")
		refused := false
		for _, c := range calls[p] {
			refused = refused || (c.Name == name && c.Refused(out))
		}
		assert.True(t, refused, "not a refused call: %s", line)
	}
	assert.Equal(t, 1, memoryFindings, "fork-memory's finding:\n%s", strings.Join(got, "\n"))
	assert.Len(t, got, len(calls["linux/amd64"])+len(calls["linux/arm64"])+1, "one finding per program:\n%s", strings.Join(got, "\n"))
	h.Untouched(t, strings.Join(got, "\n"))
	assert.Equal(t, len(got), tr.Count(), "one sandbox per program")
	assert.Empty(t, tr.Leftovers())
	assert.False(t, r.OK())
}
