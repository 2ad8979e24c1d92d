package execerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNewKeepsTheFirstLines(t *testing.T) {
	var out strings.Builder
	out.WriteString("go: downloading example.com/a v1.0.0\n\n")
	for i := range 25 {
		fmt.Fprintf(&out, "file.go:%d:1: undefined: x%d\n", i+1, i)
		out.WriteString("go: downloading example.com/b v1.0.0\n")
	}
	out.WriteString("\tindented\r\n")
	exit := errors.New("exit status 1")
	e := New("build ./x for linux/arm64", exit, []byte(out.String()))
	assert.Len(t, e.Lines, MaxLines)
	assert.Equal(t, "file.go:1:1: undefined: x0", e.Lines[0])
	assert.Equal(t, 6, e.More, "26 lines of output, download noise and blank lines left out")
	assert.ErrorIs(t, e, exit)
	msg := e.Error()
	assert.True(t, strings.HasPrefix(msg, "build ./x for linux/arm64: exit status 1\n  file.go:1:1: undefined: x0\n"), msg)
	assert.True(t, strings.HasSuffix(msg, "\n  file.go:20:1: undefined: x19\n  ... and 6 more lines"), msg)
	assert.NotContains(t, msg, "downloading")
	assert.True(t, Is(fmt.Errorf("release: %w", e)))
	assert.False(t, Is(exit))

	e = New("git describe", exit, []byte("\tindented\r\n"+strings.Repeat("x", 600)+"\n"))
	assert.Equal(t, []string{"    indented", strings.Repeat("x", 500) + " ... (100 more bytes)"}, e.Lines)
	assert.Equal(t, "git describe: exit status 1\n  (no output)", New("git describe", exit, nil).Error())
}

func TestHint(t *testing.T) {
	tests := []struct {
		name, output, want string
	}{
		{"proxy refuses the zip", "cmd/app/main.go:3:8: gitlab.com/g/lib@v1.0.0: reading https://proxy.golang.org/gitlab.com/g/lib/@v/v1.0.0.zip: 403 Forbidden\n    server response: nope",
			"the module proxy refused gitlab.com/g/lib (403 Forbidden): let go fetch it from its origin (GOPRIVATE=gitlab.com/g/lib, with credentials for its host in ~/.netrc or git's config), name a proxy that serves it (GOPROXY), or build from vendored modules (go mod vendor, then GOFLAGS=-mod=vendor)"},
		{"proxy lacks the module", "go: module gitlab.com/g/lib: reading https://proxy.golang.org/gitlab.com/g/lib/@v/list: 410 Gone",
			"the module proxy refused gitlab.com/g/lib (410 Gone): let go fetch it from its origin (GOPRIVATE=gitlab.com/g/lib, with credentials for its host in ~/.netrc or git's config), name a proxy that serves it (GOPROXY), or build from vendored modules (go mod vendor, then GOFLAGS=-mod=vendor)"},
		{"missing go.sum entry", "main.go:3:8: missing go.sum entry for module providing package gitlab.com/g/lib (imported by example.com/app); to add:\n    go get example.com/app",
			"go.sum lacks an entry the build needs: run go mod tidy in the module and commit go.mod and go.sum"},
		{"git asks for a password", "go: gitlab.com/g/lib@v1.0.0: git ls-remote -q origin in /x: exit status 128:\n    fatal: could not read Username for 'https://gitlab.com': terminal prompts disabled",
			"go fetched a module with git, which asked for credentials: give git credentials for that host (~/.netrc or a git credential helper), or name a proxy that serves the module (GOPROXY)"},
		{"dubious ownership", "fatal: detected dubious ownership in repository at '/builds/g/p'",
			"git refuses a repository another user owns: git config --global --add safe.directory /builds/g/p"},
		{"a compile error", "main.go:5:2: undefined: x", ""},
		{"a proxy's server error is no refusal", "go: example.com/m@v1.0.0: reading https://proxy/example.com/m/@v/v1.0.0.zip: 502 Bad Gateway", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Hint(strings.Split(tt.output, "\n")))
		})
	}
}
