package execerr

import (
	"errors"
	"fmt"
	"strings"
)

// MaxLines is how many lines of a child's output an Error keeps.
const MaxLines = 20

// maxLineLen cuts a single output line (go prints whole server responses).
const maxLineLen = 500

// Error is a child process that failed.
type Error struct {
	// What names what ran, as the caller says it: "build ./apps/x for linux/arm64".
	What string
	// Err is how it ended (an *exec.ExitError, or a start failure).
	Err error
	// Lines are the first MaxLines lines of its output, noise dropped.
	Lines []string
	// More counts the lines after Lines.
	More int
	// Hint is the way out, "" when none is known.
	Hint string
}

// New is the failure of what, ended by err, which printed output (stdout
// and stderr as the child interleaved them). Blank lines and go's
// "go: downloading" progress are dropped and leading tabs become spaces;
// Hint adds the way out.
func New(what string, err error, output []byte) *Error {
	e := &Error{What: what, Err: err}
	var kept []string
	for l := range strings.SplitSeq(strings.ReplaceAll(string(output), "\r\n", "\n"), "\n") {
		l = strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "go: downloading ") || strings.HasPrefix(l, "go: finding ") || strings.HasPrefix(l, "go: extracting ") {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, "\t"))
		kept = append(kept, strings.Repeat("    ", indent)+l[indent:])
	}
	e.Hint = Hint(kept)
	if len(kept) > MaxLines {
		e.More = len(kept) - MaxLines
		kept = kept[:MaxLines]
	}
	for i, l := range kept {
		if len(l) > maxLineLen {
			kept[i] = l[:maxLineLen] + fmt.Sprintf(" ... (%d more bytes)", len(l)-maxLineLen)
		}
	}
	e.Lines = kept
	return e
}

// Error is what, how it ended, then each output line indented by two
// spaces, the count of lines left out and the way out on its own line.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v", e.What, e.Err)
	if len(e.Lines) == 0 {
		b.WriteString("\n  (no output)")
	}
	for _, l := range e.Lines {
		b.WriteString("\n  ")
		b.WriteString(l)
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more lines", e.More)
	}
	if e.Hint != "" {
		b.WriteString("\n")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether err is or wraps an *Error: its message has several
// lines meant to be printed as they are.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
