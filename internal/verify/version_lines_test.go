package verify

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
)

// TestVersionLinesOfAStartUp: a start-up run's --version must print
// GitLab's Version: and OS/Arch: lines, the latter of the platform (issue
// 39: docs/verify.md said OS/Arch was required, a program without one
// passed). Plain --run, which runs any Go program, compares an OS/Arch
// line only where there is one (TestRunCheck).
func TestVersionLinesOfAStartUp(t *testing.T) {
	r := &runCheck{platform: v1.Platform{OS: "linux", Architecture: "arm64"}}
	for _, tt := range []struct {
		lines [][2]string
		why   string
	}{
		{[][2]string{{"s", "Version:      17.10.0"}, {"s", "OS/Arch:      linux/arm64"}}, ""},
		{[][2]string{{"s", "Version:      17.10.0"}}, "printed no OS/Arch: line, so nothing shows the image holds this platform's build"},
		{[][2]string{{"s", "OS/Arch:      linux/arm64"}}, "printed no Version: line"},
		{[][2]string{{"s", "Version:      17.10.0"}, {"s", "OS/Arch:      linux/amd64"}}, "says OS/Arch linux/amd64, want linux/arm64"},
	} {
		_, why := r.versionProblem(tt.lines)
		assert.Equal(t, tt.why, why, "%v", tt.lines)
	}
}
