package verify

import (
	"bytes"
	"strings"
	"sync"
)

// stepMarker starts a line of a start-up script that names the step that
// runs next ("@@step /configmaps/check-live").
const stepMarker = "@@step "

// outputTail bounds the output kept per step for a finding.
const outputTail = 2 << 10

// stepLog is the output of a start-up run, split into steps by the
// scripts' marker lines. Each new step is sent on steps (without blocking
// the program: the channel has room for every step, and beyond that a new
// step is only seen by the next one). It keeps the last outputTail bytes
// of each step and stops counting past outputLimit.
type stepLog struct {
	mu      sync.Mutex
	current string
	tail    []byte   // the current step's last bytes
	all     []string // every step seen, in order
	partial []byte   // an unfinished line
	total   int
	over    func()
	steps   chan string
	// versions are the "Version:" and "OS/Arch:" lines of the run, with
	// the step that printed them.
	versions [][2]string
}

func newStepLog(first string, over func()) *stepLog {
	return &stepLog{current: first, all: []string{first}, over: over, steps: make(chan string, 64)}
}

func (l *stepLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	before := l.total
	l.total += len(p)
	if before <= outputLimit && l.total > outputLimit && l.over != nil {
		l.over()
	}
	if before > outputLimit {
		return len(p), nil
	}
	data := append(l.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		l.line(data[:i+1])
		data = data[i+1:]
	}
	l.partial = append([]byte(nil), data...)
	if len(l.partial) > outputTail {
		l.line(l.partial)
		l.partial = nil
	}
	return len(p), nil
}

// line takes one line: a marker starts a new step, anything else is kept.
func (l *stepLog) line(b []byte) {
	if name, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), stepMarker); ok {
		l.current, l.tail = name, nil
		l.all = append(l.all, name)
		select {
		case l.steps <- name:
		default:
		}
		return
	}
	if t := strings.TrimSpace(string(b)); (strings.HasPrefix(t, "Version:") || strings.HasPrefix(t, "OS/Arch:")) && len(l.versions) < 64 {
		l.versions = append(l.versions, [2]string{l.current, t})
	}
	l.tail = append(l.tail, b...)
	if len(l.tail) > outputTail {
		l.tail = append([]byte(nil), l.tail[len(l.tail)-outputTail:]...)
	}
}

// state returns the current step, its output so far and every step seen.
func (l *stepLog) state() (step string, out string, steps []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current, strings.TrimSpace(string(l.tail) + string(l.partial)), append([]string(nil), l.all...)
}

// versionLines returns the run's "Version:" and "OS/Arch:" lines, each
// with its step.
func (l *stepLog) versionLines() [][2]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][2]string(nil), l.versions...)
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
