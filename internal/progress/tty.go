package progress

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// TTY is a live table on a terminal: the run's start line, one row per
// image × platform (its elapsed time and stage) and a line of phases,
// redrawn in place with ANSI cursor movement on every stage change and
// every Tick. No line is ever wider than the terminal (a row is shortened,
// never wrapped, so the redraw stays in place); retries, warnings and
// logged details scroll above the table. When the run ends the table stays
// as its final state.
type TTY struct {
	w    io.Writer
	size func() (cols, rows int)

	startEvent Event
	start      string
	rows       []*row
	byKey      map[string]*row
	phases     []*phase
	drawn      int  // lines of the table on screen, the cursor just below them
	dirty      bool // bytes changed since the last draw
	final      bool // the last draw: every row, however tall the terminal
}

type row struct {
	image, platform string
	stage           Stage
	detail          Event // the last stage event
	bytes           int64
	started, ended  time.Time
}

type phase struct {
	name       string
	start, end time.Time
	// stopped: the run failed before the phase ended.
	stopped bool
}

// NewTTY draws on w, a terminal whose size size returns at each redraw:
// cols 0 or less means 80; rows 0 or less, as many as the table needs.
func NewTTY(w io.Writer, size func() (cols, rows int)) *TTY {
	return &TTY{w: w, size: size, byKey: map[string]*row{}}
}

func (t *TTY) Render(e Event) {
	switch e.Kind {
	case KindStart:
		t.startEvent, t.start = e, StartLine(e)
	case KindPhaseStart:
		t.phases = append(t.phases, &phase{name: e.Phase, start: e.Time})
	case KindPhaseEnd:
		if t.startEvent.Kind == KindStart && len(t.startEvent.Platforms) == 0 && len(e.Platforms) > 0 {
			t.startEvent.Platforms = e.Platforms
			t.start = StartLine(t.startEvent)
		}
		for _, p := range t.phases {
			if p.name == e.Phase && p.end.IsZero() {
				p.end = e.Time
			}
		}
	case KindStage:
		r := t.row(e.Image, e.Platform)
		if r.started.IsZero() && e.Stage != Waiting {
			r.started = e.Time
		}
		if e.Stage == Done || e.Stage == Failed {
			r.ended = e.Time
			if e.Bytes > r.bytes {
				r.bytes = e.Bytes
			}
		}
		r.stage, r.detail = e.Stage, e
	case KindBytes:
		t.row(e.Image, e.Platform).bytes = e.Bytes
		t.dirty = true
		return // drawn on the next tick: bytes come in many small steps
	case KindLog, KindRetry:
		t.above(logLine(e), e.Time)
		return
	case KindCompiled:
		return // the rows say it
	}
	t.draw(e.Time)
}

func (t *TTY) row(image, platform string) *row {
	k := image + "\x00" + platform
	r := t.byKey[k]
	if r == nil {
		r = &row{image: image, platform: platform, stage: Waiting}
		t.byKey[k] = r
		t.rows = append(t.rows, r)
	}
	return r
}

// Tick redraws the elapsed times and byte counts.
func (t *TTY) Tick(now time.Time) {
	if t.dirty || t.running(now) {
		t.draw(now)
	}
}

// running says whether anything shown still counts time.
func (t *TTY) running(time.Time) bool {
	for _, r := range t.rows {
		if !r.started.IsZero() && r.ended.IsZero() {
			return true
		}
	}
	for _, p := range t.phases {
		if p.end.IsZero() {
			return true
		}
	}
	return false
}

// Close draws the final state: a row that never finished reads "stopped"
// when the run failed.
//
// A run that failed before any row appeared (in the resolve phase, on its
// inputs) leaves nothing: the error line says it all.
func (t *TTY) Close(now time.Time, err error) {
	if err != nil && len(t.rows) == 0 {
		t.erase()
		t.drawn = 0
		return
	}
	if err != nil {
		for _, r := range t.rows {
			if r.stage != Done && r.stage != Failed {
				r.stage, r.ended = "stopped", now
				if r.started.IsZero() {
					r.started = now
				}
			}
		}
		for _, p := range t.phases {
			if p.end.IsZero() {
				p.end, p.stopped = now, true
			}
		}
	}
	t.final = true
	t.draw(now)
}

// above prints line above the table and draws the table again below it.
func (t *TTY) above(line string, now time.Time) {
	t.erase()
	fmt.Fprintln(t.w, line)
	t.drawn = 0
	t.draw(now)
}

func (t *TTY) erase() {
	if t.drawn > 0 {
		fmt.Fprintf(t.w, "\x1b[%dA\r\x1b[J", t.drawn)
	}
}

// A table taller than the terminal could not be redrawn in place (the
// cursor cannot go above the screen's top): while the run goes on, rows
// that are done are folded into one line so it fits; the final draw shows
// every row, since nothing is redrawn after it.
func (t *TTY) draw(now time.Time) {
	t.dirty = false
	width, height := t.size()
	if width <= 0 {
		width = 80
	}
	if t.final {
		height = 0
	}
	lines := t.lines(now, width, height)
	var b strings.Builder
	if t.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", t.drawn)
	}
	for _, l := range lines {
		// One column is left free: a line that fills the last column
		// makes some terminals wrap the cursor, which breaks the redraw.
		b.WriteString("\r\x1b[2K" + clip(l, width-1) + "\n")
	}
	b.WriteString("\x1b[J")
	io.WriteString(t.w, b.String())
	t.drawn = len(lines)
}

// lines is the table as text, one string per terminal line.
// On a terminal narrower than 80 columns the columns are closer together,
// so the stage keeps more of its room.
// With height > 0 the lines fit in height-1 (the cursor's line).
func (t *TTY) lines(now time.Time, width, height int) []string {
	var out []string
	if t.start != "" {
		out = append(out, t.start)
	}
	iw, pw := len("IMAGE"), len("PLATFORM")
	for _, r := range t.rows {
		iw, pw = max(iw, len(r.image)), max(pw, len(r.platform))
	}
	format := "%-*s  %-*s  %6s  %s"
	if width < 80 {
		format = "%-*s %-*s %5s %s"
	}
	if len(t.rows) > 0 {
		out = append(out, fmt.Sprintf(format, iw, "IMAGE", pw, "PLATFORM", "TIME", "STAGE"))
	}
	room := -1
	if height > 0 {
		room = height - 1 - len(out) - 1 // below the start line and header, above the phases and the cursor
	}
	shown, hidden, hiddenDone := t.fit(room)
	for _, r := range shown {
		out = append(out, fmt.Sprintf(format, iw, r.image, pw, r.platform, r.elapsed(now), r.stageText(width < 80)))
	}
	if hidden > 0 {
		out = append(out, fmt.Sprintf("… %d more (%d done)", hidden, hiddenDone))
	}
	if len(t.phases) > 0 {
		var ps []string
		for _, p := range t.phases {
			if p.end.IsZero() {
				ps = append(ps, p.name+" "+Duration(now.Sub(p.start))+"…")
			} else {
				mark := " ✓"
				if p.stopped {
					mark = " ✗"
				}
				ps = append(ps, p.name+" "+Duration(p.end.Sub(p.start))+mark)
			}
		}
		out = append(out, strings.Join(ps, " · "))
	}
	return out
}

// fit is the rows to show in room lines (room < 0: no limit): every row
// when they fit, else, beside one line that counts the rest, the rows
// still at work first (in order) and done rows in what room is left. It
// returns the rows left out and how many of them are done.
func (t *TTY) fit(room int) (shown []*row, hidden, hiddenDone int) {
	if room < 0 || len(t.rows) <= room {
		return t.rows, 0, 0
	}
	keep := max(room-1, 0)
	atWork := 0
	for _, r := range t.rows {
		if r.stage != Done {
			atWork++
		}
	}
	doneRoom := max(keep-atWork, 0)
	for _, r := range t.rows {
		switch {
		case len(shown) == keep:
		case r.stage != Done:
			shown = append(shown, r)
			continue
		case doneRoom > 0:
			doneRoom--
			shown = append(shown, r)
			continue
		}
		hidden++
		if r.stage == Done {
			hiddenDone++
		}
	}
	return shown, hidden, hiddenDone
}

func (r *row) elapsed(now time.Time) string {
	switch {
	case r.started.IsZero():
		return "-"
	case !r.ended.IsZero():
		return Duration(r.ended.Sub(r.started))
	}
	return Duration(now.Sub(r.started))
}

// stageText is the row's stage; narrow, an upload is a percentage.
func (r *row) stageText(narrow bool) string {
	e := r.detail
	switch r.stage {
	case Writing:
		s := string(Writing)
		if e.Of > 0 {
			s += fmt.Sprintf(" %d/%d", e.Count, e.Of)
		}
		if r.bytes > 0 {
			s += ", " + Size(r.bytes) + " sent"
		}
		return s
	case Uploading:
		switch {
		case e.Total > 0 && narrow:
			return fmt.Sprintf("uploading %d%%", min(r.bytes, e.Total)*100/e.Total)
		case e.Total > 0:
			return fmt.Sprintf("uploading %s/%s", Size(min(r.bytes, e.Total)), Size(e.Total))
		}
		return "uploading " + Size(r.bytes)
	case Done:
		// The 12 hex digits alone, as docker shows an ID: the row is short.
		s := "done " + ShortHex(e.Digest)
		if e.Total > 0 {
			s += " " + Size(e.Total)
		}
		return s
	case Failed:
		return "failed: " + FirstLine(e.Message)
	}
	return string(r.stage)
}
