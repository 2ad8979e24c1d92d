package recipe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics and that every error is one line
// naming the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(full))
	f.Add([]byte("platforms: [linux/amd64]\nbinaries: [{main: ., output: x}]\n"))
	f.Add([]byte("build: {ldflags: \"{{.Version\"}\n"))
	f.Add([]byte("images: [{name: a, base: {linux/arm: x}}]\n"))
	f.Add([]byte("a: &x [1]\nb: *x\n<<: *x\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "f.yaml:") {
				t.Fatalf("error does not name the file: %q", msg)
			}
			if utf8.ValidString(msg) && strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
			return
		}
		if len(c.Binaries) == 0 {
			t.Fatalf("accepted a config without binaries")
		}
		// Planning a parsed config must not panic either.
		_, _ = c.Plan(Vars{Version: "v1", Date: "2025-01-01T00:00:00Z"}, Selection{})
	})
}
