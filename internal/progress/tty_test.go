package progress

import (
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ttyRun(width, stopAt int, err error, ticks bool) *screen {
	s := newScreen(width)
	c := newClock()
	rep := NewReporter(NewTTY(s, func() (int, int) { return width, 0 }), c.now)
	if ticks {
		// A ticker that fires between every moment: drives the redraws of
		// times and bytes without any real time passing.
		pushScript(c, tickingSink{rep}, stopAt)
	} else {
		pushScript(c, rep, stopAt)
	}
	if stopAt == 0 || err != nil {
		rep.Close(err)
	}
	return s
}

type tickingSink struct{ r *Reporter }

func (t tickingSink) Event(e Event) { t.r.Event(e); t.r.Tick() }

// rowsOf are the table rows of a screen: lines that start with an image.
func rowsOf(lines []string) []string {
	var out []string
	for _, l := range lines {
		for _, img := range scriptImages {
			if strings.HasPrefix(l, img+" ") {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// TestTTYFinalState: after the run, the screen holds the retry above the
// table, the start line, one row per image × platform in order, each done
// with its 12-hex digest and size, and every phase ticked; the table was
// redrawn in place (nothing left of earlier frames).
func TestTTYFinalState(t *testing.T) {
	for _, width := range []int{100, 60} {
		s := ttyRun(width, 0, nil, true)
		all := s.text()
		lines := all[retryLines(width)-1:] // the retry wraps as scrolled text does
		assert.Zero(t, s.wrapped, "a line wrapped at width %d", width)
		assert.Less(t, s.maxRowLen, width)
		rows := rowsOf(lines)
		require.Len(t, rows, 10, "width %d:\n%s", width, strings.Join(lines, "\n"))
		k := 0
		for _, img := range scriptImages {
			for _, p := range scriptPlatforms {
				assert.True(t, strings.HasPrefix(rows[k], img+" "), rows[k])
				assert.Contains(t, rows[k], p)
				short := ShortHex(digestOf(img, p))
				if width >= 100 {
					assert.Contains(t, rows[k], "done "+short+" 762.9 KiB")
				} else {
					assert.Contains(t, rows[k], "done "+short)
				}
				k++
			}
		}
		assert.True(t, strings.HasPrefix(all[0], `level=WARN msg="retrying request"`), all[0])
		lines[0] = all[0]
		assert.True(t, strings.HasPrefix(lines[len(lines)-1], "resolve 0.7s ✓ · build 9.8s ✓ · publish 0.7s ✓") ||
			width < 100 && strings.HasPrefix(lines[len(lines)-1], "resolve 0.7s ✓ · build"), lines[len(lines)-1])
		// retry line, start line, header, 10 rows, phases: no frame left behind.
		assert.Len(t, lines, 14, strings.Join(all, "\n"))
	}
}

// TestTTYMidRun: stopped in the middle, the rows show every stage a unit
// can be in, with elapsed times, and none is wider than the terminal.
func TestTTYMidRun(t *testing.T) {
	s := ttyRun(100, 11, nil, true)
	lines := s.text()
	rows := rowsOf(lines)
	require.Len(t, rows, 10, strings.Join(lines, "\n"))
	screenText := strings.Join(lines, "\n")
	assert.Regexp(t, `done [0-9a-f]{12} `, rows[0])
	assert.Contains(t, rows[1], "uploading 256.0 KiB/761.7 KiB", screenText)
	assert.Contains(t, rows[2], "writing layer 1/2", screenText)
	assert.Contains(t, rows[3], "compiling", screenText)
	assert.Contains(t, rows[4], "compiling", screenText)
	assert.Contains(t, lines[len(lines)-1], "build ")
	assert.Contains(t, lines[len(lines)-1], "…")
	assert.Zero(t, s.wrapped)
}

// TestTTYNarrow: on a terminal too narrow for the rows they are cut, with
// a mark, never wrapped; the redraw stays in place.
func TestTTYNarrow(t *testing.T) {
	for _, width := range []int{40, 20, 2} {
		s := ttyRun(width, 0, nil, true)
		assert.Zero(t, s.wrapped, "width %d", width)
		assert.Less(t, s.maxRowLen, width)
		// Below the retry line (which wraps as any scrolled text does):
		// the start line, the header, 10 rows and the phases.
		lines := s.text()
		assert.Len(t, lines[retryLines(width):], 13, "width %d", width)
	}
}

// TestTTYFailure: a failed run leaves its final state: the failed row says
// why, rows that never finished say stopped, no phase keeps counting and
// the phase the failure cut short reads ✗, not ✓.
func TestTTYFailure(t *testing.T) {
	s := newScreen(140)
	c := newClock()
	rep := NewReporter(NewTTY(s, func() (int, int) { return 140, 0 }), c.now)
	pushScript(c, rep, 9)
	rep.Event(Event{Kind: KindStage, Image: "gitlab-runner", Platform: "linux/amd64", Stage: Failed, Message: "image gitlab-runner for linux/amd64: verify: 1 check failed\nmore"})
	rep.Close(errors.New("image gitlab-runner: 1 check failed"))
	rows := rowsOf(s.text())
	require.Len(t, rows, 10)
	assert.Contains(t, rows[5], "failed: image gitlab-runner for linux/amd64: verify: 1 check failed")
	assert.NotContains(t, rows[5], "more")
	assert.Contains(t, rows[9], "stopped")
	assert.True(t, strings.HasSuffix(s.text()[len(s.text())-1], "build 5.6s ✗"), "no phase keeps counting, and the one the failure cut short is not marked done")
}

// TestTTYTickAfterEnd: once nothing counts time any more, a tick writes
// not one byte (the ticker may fire once more before it stops), and after
// Close the table stays as its final state: no redraw, no clearing, and
// the elapsed times of the rows stopped by a failure do not grow.
func TestTTYTickAfterEnd(t *testing.T) {
	t.Run("done", func(t *testing.T) {
		s, w, c, tty, rep := countedTTY(100)
		pushScript(c, rep, 0)
		before := strings.Join(s.text(), "\n")
		n := w.n
		c.advance(time.Minute)
		rep.Tick()
		assert.Equal(t, n, w.n, "a tick with nothing running wrote")
		rep.Close(nil)
		assert.Equal(t, before, strings.Join(s.text(), "\n"), "the final draw is the last state")
		n = w.n
		c.advance(time.Minute)
		tty.Tick(c.now())
		assert.Equal(t, n, w.n, "a tick after Close wrote")
	})
	t.Run("failed", func(t *testing.T) {
		s, w, c, tty, rep := countedTTY(140)
		pushScript(c, rep, 5) // linux/amd64 uploading, the last platforms still compiling
		c.advance(2 * time.Second)
		rep.Close(errors.New("interrupted"))
		final := s.text()
		rows := rowsOf(final)
		require.Len(t, rows, 10)
		// linux/amd64 started compiling at 0.7s and was stopped at 4.8s.
		assert.Regexp(t, `^gitlab-runner-helper\s+linux/amd64\s+4\.1s\s+stopped$`, rows[0])
		n := w.n
		c.advance(time.Minute)
		tty.Tick(c.now())
		assert.Equal(t, n, w.n, "a tick after Close wrote")
		assert.Equal(t, final, s.text())
	})
}

// countedTTY is a TTY on a screen width wide, the bytes written to it
// counted, its reporter on a fake clock.
func countedTTY(width int) (*screen, *countWriter, *clock, *TTY, *Reporter) {
	s := newScreen(width)
	w := &countWriter{w: s}
	c := newClock()
	tty := NewTTY(w, func() (int, int) { return width, 0 })
	return s, w, c, tty, NewReporter(tty, c.now)
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return c.w.Write(p)
}

// retryLines is how many screen lines the script's retry line takes at
// width.
func retryLines(width int) int {
	n := utf8.RuneCountInString(logLine(Event{Kind: KindRetry, Level: "WARN", Message: "retrying request", Fields: []Field{
		{Key: "method", Value: "PATCH"}, {Key: "url", Value: "http://localhost:5000/v2/group/gitlab-runner/blobs/uploads/1"},
		{Key: "reason", Value: "503 Service Unavailable"}, {Key: "attempt", Value: "1/5"}, {Key: "wait", Value: "1s"}}}))
	return (n + width - 1) / width
}

// TestReporterConcurrent: units report from goroutines of their own while
// a ticker redraws; every row ends done, whatever the interleaving.
func TestReporterConcurrent(t *testing.T) {
	s := newScreen(100)
	c := newClock()
	var mu sync.Mutex // the fake clock is read under the Reporter's lock only; advance it under ours
	rep := NewReporter(NewTTY(s, func() (int, int) { return 100, 0 }), func() time.Time { mu.Lock(); defer mu.Unlock(); return c.now() })
	for _, img := range scriptImages {
		for _, p := range scriptPlatforms {
			rep.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Waiting})
		}
	}
	var wg sync.WaitGroup
	for _, img := range scriptImages {
		for _, p := range scriptPlatforms {
			wg.Go(func() {
				for _, st := range []Stage{Compiling, Writing, Checking, Uploading} {
					rep.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: st})
					for n := range 20 {
						rep.Event(Event{Kind: KindBytes, Image: img, Platform: p, Bytes: int64(n) << 10})
					}
				}
				rep.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Done, Digest: digestOf(img, p)})
			})
		}
	}
	wg.Go(func() {
		for range 50 {
			mu.Lock()
			c.advance(100 * time.Millisecond)
			mu.Unlock()
			rep.Tick()
		}
	})
	wg.Wait()
	rep.Close(nil)
	rows := rowsOf(s.text())
	require.Len(t, rows, 10, strings.Join(s.text(), "\n"))
	for _, r := range rows {
		assert.Regexp(t, ` done [0-9a-f]{12}$`, r)
	}
	assert.Zero(t, s.wrapped)
}

// TestTTYNarrowUpload: on a narrow terminal an upload shows as a
// percentage, which fits where "sent/total" would be cut.
func TestTTYNarrowUpload(t *testing.T) {
	s := ttyRun(60, 11, nil, true)
	rows := rowsOf(s.text())
	require.Len(t, rows, 10, strings.Join(s.text(), "\n"))
	assert.True(t, strings.HasSuffix(rows[1], " uploading 33%"), rows[1])
}

// TestTTYShortTerminal: on a terminal too short for every row, the rows
// still at work are shown and the others counted on one line, so the
// table is redrawn in place (no earlier frame is left in the scrollback);
// the final draw shows every row.
func TestTTYShortTerminal(t *testing.T) {
	draw := func(stopAt int, closed bool) *screen {
		s := newScreen(100)
		s.height = 12
		c := newClock()
		rep := NewReporter(NewTTY(s, func() (int, int) { return 100, 12 }), c.now)
		pushScript(c, tickingSink{rep}, stopAt)
		if closed {
			rep.Close(nil)
		}
		return s
	}
	headers := func(lines []string) int {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "IMAGE ") {
				n++
			}
		}
		return n
	}

	mid := draw(11, false).text()
	assert.Equal(t, 1, headers(mid), "one frame:\n%s", strings.Join(mid, "\n"))
	table := mid[slices.IndexFunc(mid, func(l string) bool { return strings.HasPrefix(l, "helperbuild push") }):]
	assert.LessOrEqual(t, len(table), 11, strings.Join(table, "\n"))
	rows := rowsOf(table)
	assert.Len(t, rows, 7)
	for _, r := range rows {
		assert.NotContains(t, r, " done ", "the rows at work are shown first")
	}
	assert.Contains(t, table, "… 3 more (2 done)")

	final := draw(0, true).text()
	assert.Equal(t, 1, headers(final), "one frame:\n%s", strings.Join(final, "\n"))
	assert.Len(t, rowsOf(final), 10, "the final state has every row")
	assert.NotContains(t, strings.Join(final, "\n"), "more (")
}
