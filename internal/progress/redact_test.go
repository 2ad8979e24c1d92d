package progress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRedact: a URL keeps its path and loses its query; text around it
// stays.
func TestRedact(t *testing.T) {
	assert.Equal(t, `Put "http://127.0.0.1:5000/v2/a/blobs/uploads/1": EOF`,
		Redact(`Put "http://127.0.0.1:5000/v2/a/blobs/uploads/1?_state=SECRET&digest=sha256:ab": EOF`))
	assert.Equal(t, "see https://h/x and https://h/y now", Redact("see https://h/x?a=1 and https://h/y?b=2 now"))
	assert.Equal(t, "no url? fine", Redact("no url? fine"))
}

// TestRenderersRedact: whatever renders a run (live table, plain lines,
// JSON, quiet) never shows an upload's session state, neither in a failed
// row, nor in a retry's message or fields, nor in the run's error.
func TestRenderersRedact(t *testing.T) {
	loc := "http://127.0.0.1:5000/v2/group/helper/blobs/uploads/7f3a?_state=SECRET&digest=sha256:0"
	uerr := &url.Error{Op: "Put", URL: loc, Err: io.ErrUnexpectedEOF}
	run := fmt.Errorf("push helper linux/arm64: %w", uerr)
	renderers := map[string]func(w io.Writer) Renderer{
		"tty":   func(w io.Writer) Renderer { return NewTTY(w, func() (int, int) { return 400, 0 }) },
		"plain": func(w io.Writer) Renderer { return NewPlain(w, false) },
		"json":  func(w io.Writer) Renderer { return NewJSON(w) },
		"quiet": func(w io.Writer) Renderer { return NewQuiet(w) },
	}
	for name, mk := range renderers {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			c := newClock()
			rep := NewReporter(mk(&b), c.now)
			rep.Event(Event{Kind: KindStart, Message: "helperbuild push", Images: []string{"helper"}, Platforms: []string{"linux/arm64"}})
			rep.Event(Event{Kind: KindPhaseStart, Phase: "resolve"})
			rep.Event(Event{Kind: KindRetry, Level: "WARN", Message: "retrying " + uerr.Error(),
				Fields: []Field{{Key: "url", Value: loc}, {Key: "error", Value: uerr.Error()}}})
			rep.Event(Event{Kind: KindPhaseEnd, Phase: "resolve"})
			rep.Event(Event{Kind: KindStage, Image: "helper", Platform: "linux/arm64", Stage: Uploading})
			rep.Event(Event{Kind: KindStage, Image: "helper", Platform: "linux/arm64", Stage: Failed, Message: uerr.Error()})
			rep.Close(run)
			out := b.String()
			assert.NotContains(t, out, "SECRET", out)
			assert.NotContains(t, out, "_state", out)
			assert.Contains(t, out, "/v2/group/helper/blobs/uploads/7f3a", "the path stays")
		})
	}
}

// TestReporterRedactsCopy: the redacted fields are a copy; the sender's
// slice is left as it was.
func TestReporterRedactsCopy(t *testing.T) {
	var got Event
	rep := NewReporter(rendererFunc(func(e Event) { got = e }), newClock().now)
	fields := []Field{{Key: "url", Value: "https://h/x?s=1"}}
	rep.Event(Event{Kind: KindLog, Fields: fields})
	assert.Equal(t, "https://h/x", got.Fields[0].Value)
	assert.Equal(t, "https://h/x?s=1", fields[0].Value)
}

// rendererFunc renders each event with f and ignores ticks and the end.
type rendererFunc func(Event)

func (f rendererFunc) Render(e Event)       { f(e) }
func (rendererFunc) Tick(time.Time)         {}
func (rendererFunc) Close(time.Time, error) {}

func TestLoggerDropsURLQueries(t *testing.T) {
	var b strings.Builder
	log := NewLogger(&b)
	log.Warn("x", "url", "http://127.0.0.1:5000/v2/g/blobs/uploads/abc?_state=SECRET&digest=sha256:1", "err", errors.New(`Patch "https://r/v2/x/blobs/uploads/1?_state=SECRET": EOF`))
	assert.NotContains(t, b.String(), "SECRET")
	assert.Contains(t, b.String(), "url=http://127.0.0.1:5000/v2/g/blobs/uploads/abc ")
	assert.Contains(t, b.String(), `Patch \"https://r/v2/x/blobs/uploads/1\": EOF`)
}
