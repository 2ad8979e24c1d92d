package testkit

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is a log sink safe for concurrent writers.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Lines is everything written so far, one element a line; nil when empty.
func (s *Buffer) Lines() []string {
	text := strings.TrimSpace(s.String())
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
