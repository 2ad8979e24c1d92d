package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFindingsGroupSharedReasons(t *testing.T) {
	r := &Report{
		Problems: []string{"linux/s390x missing from the index"},
		Platforms: []PlatformReport{
			{Platform: "linux/amd64", Checks: []Check{
				{Name: "contract", Reason: "/usr/bin/dumb-init missing: x"},
				{Name: "arch", OK: true, Reason: "2 ELF files ok"},
			}},
			{Platform: "linux/arm64", Checks: []Check{
				{Name: "arch", Reason: "/usr/bin/x is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64"},
				{Name: "contract", Reason: "/usr/bin/dumb-init missing: x"},
				{Name: "arch", OK: true, Warning: true, Reason: "CGO_ENABLED=1"},
			}},
		},
	}
	assert.Equal(t, []string{
		"linux/amd64,linux/arm64 contract: FAIL: /usr/bin/dumb-init missing: x",
		"linux/arm64 arch: FAIL: /usr/bin/x is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64",
		"linux/arm64 arch: warning: CGO_ENABLED=1",
		"index: FAIL: linux/s390x missing from the index",
	}, r.Findings())
}
