package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// stampWriter prefixes every line written to it with the time since start
// and remembers when each helperbuild log message (msg=NAME) was last seen,
// so the report can split a run into phases.
type stampWriter struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	buf   []byte
	marks map[string]time.Duration
}

func newStampWriter(w io.Writer, start time.Time) *stampWriter {
	return &stampWriter{w: w, start: start, marks: map[string]time.Duration{}}
}

func (s *stampWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		s.line(string(s.buf[:i]))
		s.buf = s.buf[i+1:]
	}
	return len(p), nil
}

func (s *stampWriter) line(l string) {
	at := time.Since(s.start)
	fmt.Fprintf(s.w, "[%7.3fs] %s\n", at.Seconds(), l)
	if _, rest, ok := strings.Cut(l, "msg="); ok {
		name := rest
		if strings.HasPrefix(name, `"`) {
			name, _, _ = strings.Cut(name[1:], `"`)
		} else {
			name, _, _ = strings.Cut(name, " ")
		}
		s.marks[name] = at
	}
}

// flush writes a last unterminated line and returns the marks.
func (s *stampWriter) flush() map[string]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) > 0 {
		s.line(string(s.buf))
		s.buf = nil
	}
	return s.marks
}
