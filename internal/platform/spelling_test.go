package platform

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseListAsGiven: what each other spelling became is said; two
// spellings of one platform are refused naming both (issue 39: both were
// silent).
func TestParseListAsGiven(t *testing.T) {
	for _, tt := range []struct {
		in, want, changes string
	}{
		{"linux/amd64,linux/arm64", "linux/amd64,linux/arm64", ""},
		{"linux/x86_64,linux/aarch64", "linux/amd64,linux/arm64", "linux/x86_64 -> linux/amd64, linux/aarch64 -> linux/arm64"},
		{"Linux/amd64,linux/arm64/v8,linux/arm", "linux/amd64,linux/arm64,linux/arm/v7", "Linux/amd64 -> linux/amd64, linux/arm64/v8 -> linux/arm64, linux/arm -> linux/arm/v7"},
		{"linux/amd64,", "linux/amd64", `an empty item after "linux/amd64" dropped`},
		{",linux/amd64", "linux/amd64", `an empty item at the start dropped`},
		{" linux/amd64 , linux/s390x", "linux/amd64,linux/s390x", ""},
	} {
		t.Run(tt.in, func(t *testing.T) {
			ps, changes, err := ParseListAsGiven(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, FormatList(ps))
			assert.Equal(t, tt.changes, strings.Join(changes, ", "))
		})
	}
	for in, want := range map[string]string{
		"linux/amd64,linux/x86_64":   `linux/amd64 and linux/x86_64 are both linux/amd64; give it once`,
		"linux/arm64,linux/arm64":    `linux/arm64 is given twice; give it once`,
		"linux/arm,linux/arm/v7":     `linux/arm and linux/arm/v7 are both linux/arm/v7; give it once`,
		"linux/arm64/v8,Linux/arm64": `linux/arm64/v8 and Linux/arm64 are both linux/arm64; give it once`,
		",":                          `"," names no platform; give e.g. linux/amd64,linux/arm64`,
	} {
		_, _, err := ParseListAsGiven(in)
		assert.EqualError(t, err, want, in)
	}
}
