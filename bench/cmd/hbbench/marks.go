package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// event is the part of one helperbuild progress event (--progress json,
// internal/progress.Event) the breakdown reads.
type event struct {
	Time     time.Time     `json:"time"`
	Kind     string        `json:"kind"`
	Phase    string        `json:"phase"`
	Image    string        `json:"image"`
	Platform string        `json:"platform"`
	Stage    string        `json:"stage"`
	Count    int           `json:"count"`
	Duration time.Duration `json:"duration"`
	Message  string        `json:"message"`
	Fields   []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	} `json:"fields"`
}

// field is the value of a logged event's key, "" if absent.
func (e event) field(key string) string {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// stampWriter prefixes every line written to it with the time since start
// and keeps the helperbuild progress events among them (JSON lines), so
// the report can split a run into phases.
type stampWriter struct {
	mu     sync.Mutex
	w      io.Writer
	start  time.Time
	buf    []byte
	events []event
}

func newStampWriter(w io.Writer, start time.Time) *stampWriter {
	return &stampWriter{w: w, start: start}
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
	fmt.Fprintf(s.w, "[%7.3fs] %s\n", time.Since(s.start).Seconds(), l)
	if !strings.HasPrefix(l, "{") {
		return
	}
	var e event
	if json.Unmarshal([]byte(l), &e) == nil && e.Kind != "" && !e.Time.IsZero() {
		s.events = append(s.events, e)
	}
}

// flush writes a last unterminated line and returns the events.
func (s *stampWriter) flush() []event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) > 0 {
		s.line(string(s.buf))
		s.buf = nil
	}
	return s.events
}
