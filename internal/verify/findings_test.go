package verify

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
)

func TestFindingLinesGroupSharedReasons(t *testing.T) {
	r := &Report{
		Problems: []Finding{
			problem(CheckCoverage, "linux/s390x", "missing from the index"),
			problem(CheckCoverage, "linux/ppc64le", "missing from the index"),
			problem(CheckCoverage, "", "entry sha256:00 has no platform: clients cannot pick it"),
			{Platform: "linux/riscv64", Check: CheckNodes, Node: "vf2-1", Reason: "has no image in this index", Severity: SeverityFail},
		},
		Platforms: []PlatformReport{
			{Platform: "linux/amd64", Checks: []Check{
				{Name: "contract", Path: "/usr/bin/dumb-init", Reason: "/usr/bin/dumb-init missing: x"},
				{Name: "arch", OK: true, Reason: "2 ELF files ok"},
			}},
			{Platform: "linux/arm64", Checks: []Check{
				{Name: "arch", Path: "/usr/bin/x", Reason: "/usr/bin/x is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64"},
				{Name: "contract", Path: "/usr/bin/dumb-init", Reason: "/usr/bin/dumb-init missing: x"},
				{Name: "arch", OK: true, Warning: true, Reason: "CGO_ENABLED=1"},
			}},
		},
	}
	assert.Equal(t, []string{
		"linux/amd64,linux/arm64 contract: FAIL: /usr/bin/dumb-init missing: x",
		"linux/arm64 arch: FAIL: /usr/bin/x is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64",
		"linux/arm64 arch: warning: CGO_ENABLED=1",
		"linux/s390x,linux/ppc64le coverage: FAIL: missing from the index",
		"index coverage: FAIL: entry sha256:00 has no platform: clients cannot pick it",
		"node vf2-1 (linux/riscv64): FAIL: has no image in this index",
	}, FindingLines(r))

	// Findings are objects, one per platform.
	f := r.Findings()
	assert.Len(t, f, 8)
	assert.Equal(t, Finding{Platform: "linux/arm64", Check: "contract", Path: "/usr/bin/dumb-init", Reason: "/usr/bin/dumb-init missing: x", Severity: SeverityFail}, f[2])
	assert.Equal(t, Finding{Platform: "linux/arm64", Check: "arch", Reason: "CGO_ENABLED=1", Severity: SeverityWarning}, f[3])
	assert.Equal(t, "vf2-1", f[7].Node)
	assert.False(t, r.OK())
}

// TestReasonsPrintedOnce: every reason of a failed or warning check, and of
// every problem, appears in the table exactly once; passing summaries not.
func TestReasonsPrintedOnce(t *testing.T) {
	idx := testIndex(t,
		listed{amd64, goodHelper(t, amd64, "amd64")},
		listed{arm64, testImage(t, arm64, helperConfigOK(), busyboxBase(bins["arm64"]), helperOwn(bins["amd64"]))},
		listed{armv7, testImage(t, armv7, v1.Config{})},
	)
	r, err := Index(t.Context(), idx, Options{Platforms: []v1.Platform{amd64, arm64, plat("linux", "s390x", "")}, Contract: ContractHelper, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTable(&b, "img", r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	reasons := map[string]bool{}
	for _, f := range r.Findings() {
		reasons[f.Reason] = true
	}
	assert.NotEmpty(t, reasons)
	for reason := range reasons {
		assert.Equal(t, 1, strings.Count(out, ": "+reason+"\n"), "%q once in:\n%s", reason, out)
	}
	assert.Contains(t, out, "linux/arm/v7 coverage: FAIL: in the index but not expected")
	assert.NotContains(t, out, "is in the index but", "no second, index-level line for an entry's problem")
	assert.Regexp(t, `(?m)^linux/s390x\s+-\s+FAIL\s+-`, out, "a row for the missing platform")
	for _, p := range r.Platforms {
		for _, c := range p.Checks {
			if c.OK && !c.Warning && c.Reason != "" {
				assert.NotContains(t, out, c.Reason+"\n", "passing summaries stay in the grid")
			}
		}
	}
}

func TestFailedErrorIsOneLine(t *testing.T) {
	r := &Report{
		Problems: []Finding{problem(CheckCoverage, "linux/s390x", "missing from the index")},
		Platforms: []PlatformReport{
			{Platform: "linux/amd64", Checks: []Check{{Name: CheckContract, Reason: "a"}, {Name: CheckContract, Reason: "b"}, {Name: CheckArch, OK: true, Warning: true, Reason: "w"}}},
			{Platform: "linux/arm64", Checks: []Check{{Name: CheckContract, Reason: "a"}}},
		},
	}
	e := &FailedError{Name: "image helper", Report: r, Outcome: "nothing was published"}
	assert.Equal(t, "image helper failed verification, nothing was published: 4 contract/coverage failures on linux/amd64,linux/arm64,linux/s390x", e.Error())
	one := &FailedError{Name: "reg/x:1", Report: &Report{Problems: []Finding{problem(CheckCoverage, "", "index lists no image manifests")}}}
	assert.Equal(t, "reg/x:1 failed verification: 1 coverage failure on the index", one.Error())
	// A failure of the index itself is not one of the platform's (issue
	// 39: "2 signed failures on linux/arm/v7", one of them the index's).
	signed := &FailedError{Name: "reg/x:1", Report: &Report{
		Problems:  []Finding{problem(CheckSignature, "", "index not signed")},
		Platforms: []PlatformReport{{Platform: "linux/arm/v7", Checks: []Check{{Name: CheckSignature, Reason: "not signed"}}}},
	}}
	assert.Equal(t, "reg/x:1 failed verification: 2 signed failures on linux/arm/v7 and the index", signed.Error())
}
