package progress

import "testing"

// TestFirstLine: the first line that is not blank, trimmed, whatever the
// message's leading blank lines or trailing spaces.
func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"compile: exit status 1\n./main.go:3: undefined: x": "compile: exit status 1",
		"\n\n  Version: 17.0  \nOS/Arch: linux/amd64":       "Version: 17.0",
		"one line":  "one line",
		"  \n \t\n": "",
		"":          "",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
