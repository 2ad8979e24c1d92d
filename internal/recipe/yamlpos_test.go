package recipe

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSyntaxErrorLine breaks the bundled example's recipe the ways people
// break YAML and checks that the error names the line (and column) where
// the slip is, not the line where the enclosing block began.
func TestSyntaxErrorLine(t *testing.T) {
	example, err := os.ReadFile("../../examples/gitlab-runner/helperbuild.yaml")
	require.NoError(t, err)
	lines := strings.Split(string(example), "\n")
	require.Equal(t, `    tags: ["{{.Version}}", latest]`, lines[37], "line 38 of the example is the runner's tags")

	edit := func(line int, text string) string {
		out := append([]string(nil), lines...)
		out[line-1] = text
		return strings.Join(out, "\n")
	}
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"dedented key in a sequence item", edit(38, `  tags: ["{{.Version}}", latest]`),
			"helperbuild.yaml:38:3: value is not allowed in this context; check this line's indentation against the lines above it"},
		{"key one space off", edit(38, `   tags: ["{{.Version}}", latest]`),
			"helperbuild.yaml:38:4: value is not allowed in this context; check this line's indentation against the lines above it"},
		{"key between two levels", edit(38, `     tags: ["{{.Version}}", latest]`),
			"helperbuild.yaml:38:6: value is not allowed in this context; check this line's indentation against the lines above it"},
		{"unclosed flow sequence", edit(38, `    tags: ["{{.Version}}", latest`),
			"helperbuild.yaml:38:11: sequence end token ']' not found"},
		{"unterminated quote", edit(38, `    tags: ["{{.Version}}, latest]`),
			"helperbuild.yaml:38:12: could not find end character of double-quoted text"},
		{"tab indentation", edit(38, "\ttags: [latest]"),
			`helperbuild.yaml:38:1: found character '\t' that cannot start any token`},
		{"two values on one line", edit(38, `    tags: a: b`),
			"helperbuild.yaml:38:11: mapping value is not allowed in this context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("helperbuild.yaml", []byte(tt.yaml))
			require.Error(t, err)
			assert.EqualError(t, err, tt.want)
		})
	}
}

// An error the shape check finds after parsing keeps its own line.
func TestUnknownKeyLine(t *testing.T) {
	example, err := os.ReadFile("../../examples/gitlab-runner/helperbuild.yaml")
	require.NoError(t, err)
	broken := strings.Replace(string(example), `    tags: ["{{.Version}}", latest]`, `    tag: ["{{.Version}}", latest]`, 1)
	_, err = Parse("helperbuild.yaml", []byte(broken))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "helperbuild.yaml:38: "), "got %q", err)
}
