package progress

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// Plain writes one line per milestone: the run's start, each platform's
// binaries compiled, each image × platform done or failed (12-hex digest,
// size), each phase's end with its time, and every retry, warning and
// logged detail it is sent. With GitLab set, each phase is a collapsed
// section of the job log.
//
// Retries and warnings are printed the moment they come. Everything else
// waits until the first phase has ended (the resolve phase checks the
// inputs against registries): a run refused on its inputs prints only the
// retries and warnings it met, if any, and the command its one error line;
// a slow, flaky registry shows its retries while resolve still waits.
type Plain struct {
	w      io.Writer
	gitlab bool
	open   string  // the GitLab section open now
	held   []Event // events before the first phase ended
	shown  bool    // the first phase has ended
}

// NewPlain writes to w; gitlab wraps phases in GitLab CI's collapsible
// sections.
func NewPlain(w io.Writer, gitlab bool) *Plain {
	return &Plain{w: w, gitlab: gitlab}
}

var sectionName = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)

func (p *Plain) Render(e Event) {
	if !p.shown {
		if alert(e) {
			p.render(e)
			return
		}
		if e.Kind != KindPhaseEnd {
			p.held = append(p.held, e)
			return
		}
		p.shown = true
		for _, h := range p.held {
			if h.Kind == KindStart && len(h.Platforms) == 0 {
				h.Platforms = e.Platforms // a config-free run's, from its base
			}
			p.render(h)
		}
		p.held = nil
	}
	p.render(e)
}

func (p *Plain) render(e Event) {
	switch e.Kind {
	case KindStart:
		fmt.Fprintln(p.w, StartLine(e))
	case KindPhaseStart:
		if p.gitlab {
			p.endSection(e.Time)
			p.open = sectionName.ReplaceAllString(e.Phase, "_")
			fmt.Fprintf(p.w, "\x1b[0Ksection_start:%d:%s[collapsed=true]\r\x1b[0K%s\n", e.Time.Unix(), p.open, e.Message)
		}
	case KindPhaseEnd:
		fmt.Fprintln(p.w, phaseEndLine(e))
		if p.gitlab {
			p.endSection(e.Time)
		}
	case KindCompiled:
		fmt.Fprintln(p.w, compiledLine(e))
	case KindStage:
		switch e.Stage {
		case Done:
			fmt.Fprintln(p.w, doneLine(e))
		case Failed:
			fmt.Fprintf(p.w, "%s %s failed: %s\n", e.Image, e.Platform, FirstLine(e.Message))
		}
	case KindLog, KindRetry:
		fmt.Fprintln(p.w, logLine(e))
	}
}

func (p *Plain) Tick(time.Time) {}

// alert says whether e is a retry, a warning or an error: what every
// renderer shows, and at once.
func alert(e Event) bool {
	return e.Kind == KindRetry || e.Kind == KindLog && (e.Level == "WARN" || e.Level == "ERROR")
}

// Close ends an open section, so the error line that follows is outside
// any section. A run that failed before its first phase ended shows only
// its retries and warnings (already printed) and logged details.
func (p *Plain) Close(now time.Time, _ error) {
	for _, e := range p.held {
		if e.Kind == KindLog {
			p.render(e)
		}
	}
	p.held = nil
	if p.gitlab {
		p.endSection(now)
	}
}

func (p *Plain) endSection(now time.Time) {
	if p.open != "" {
		fmt.Fprintf(p.w, "\x1b[0Ksection_end:%d:%s\r\x1b[0K\n", now.Unix(), p.open)
		p.open = ""
	}
}

// StartLine is the run's first line: what is built, from what, to where.
func StartLine(e Event) string {
	var b strings.Builder
	b.WriteString(e.Message)
	fmt.Fprintf(&b, ": %d %s (%s) × ", len(e.Images), Plural(len(e.Images), "image", "images"), strings.Join(e.Images, ", "))
	if len(e.Platforms) == 0 {
		b.WriteString(cmp.Or(e.AllPlatforms, "every platform the base offers"))
	} else {
		fmt.Fprintf(&b, "%d %s (%s)", len(e.Platforms), Plural(len(e.Platforms), "platform", "platforms"), strings.Join(e.Platforms, ", "))
	}
	if len(e.Binaries) > 0 {
		fmt.Fprintf(&b, ", %d %s (%s)", len(e.Binaries), Plural(len(e.Binaries), "binary", "binaries"), strings.Join(e.Binaries, ", "))
	}
	if e.Destination != "" {
		b.WriteString(" → " + e.Destination)
	}
	return b.String()
}

func phaseEndLine(e Event) string {
	s := e.Phase + " done in " + Duration(e.Duration)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func doneLine(e Event) string {
	s := fmt.Sprintf("%s %s %s", e.Image, e.Platform, ShortDigest(e.Digest))
	if e.Total > 0 {
		s += " " + Size(e.Total)
	}
	if e.Of > 0 {
		s += ", " + Count(e.Of, "layer", "layers") + Split(e.Count, "new", e.Of-e.Count, "reused")
	}
	if e.Upload {
		s += ", " + Uploaded(e.Bytes)
	}
	return s
}

// compiledLine says a platform's binaries are built: compiled (go build
// wrote them) or up to date (go's cache had everything, nothing ran).
func compiledLine(e Event) string {
	verb := "compiled"
	if e.UpToDate == e.Count {
		verb = "cached"
	}
	split := "" // all compiled: the verb says it
	if e.UpToDate > 0 {
		split = Split(e.Count-e.UpToDate, "compiled", e.UpToDate, "up to date in go's cache")
	}
	return fmt.Sprintf("%s %s: %s%s in %s", verb, e.Platform, Count(e.Count, "binary", "binaries"), split, Duration(e.Duration))
}

// Count is n and its noun: "1 binary", "2 binaries".
func Count(n int, one, many string) string { return fmt.Sprintf("%d %s", n, Plural(n, one, many)) }

// Split says how a count divides into two kinds, only the kinds there
// are: " (2 new, 1 reused)", " (all new)", " (all reused)"; "" for none.
func Split(a int, aKind string, b int, bKind string) string {
	switch {
	case a+b == 0:
		return ""
	case b == 0:
		return " (all " + aKind + ")"
	case a == 0:
		return " (all " + bKind + ")"
	}
	return fmt.Sprintf(" (%d %s, %d %s)", a, aKind, b, bKind)
}

// Uploaded is what a unit or run sent to the registry: the bytes, or
// that the registry already had every blob.
func Uploaded(sent int64) string {
	if sent == 0 {
		return "nothing uploaded (the registry had every blob)"
	}
	return Size(sent) + " uploaded"
}

// logLine is a logged detail, warning or retry as logfmt, as the logger
// wrote it before there were renderers (and as -v shows every detail).
func logLine(e Event) string {
	var b strings.Builder
	b.WriteString("level=" + e.Level + " msg=")
	b.WriteString(quoteIfNeeded(e.Message))
	logfmt(&b, e.Fields)
	return b.String()
}

// Plural is one when n is 1, else many: the one place helperbuild
// words a count.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
