package progress

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSON: one JSON object per line, every event in order with its time,
// then an end line with the error.
func TestJSON(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewJSON(&b), c.now)
	pushScript(c, rep, 0)
	rep.Close(errors.New("boom"))
	out := b.String()
	var kinds []string
	var last map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		last = map[string]any{}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &last), sc.Text())
		kinds = append(kinds, last["kind"].(string))
		assert.NotEmpty(t, last["time"])
	}
	assert.Equal(t, "start", kinds[0])
	assert.Equal(t, "end", kinds[len(kinds)-1])
	assert.Equal(t, "boom", last["error"])
	assert.Contains(t, kinds, "retry")
	assert.Contains(t, kinds, "bytes")
	assert.Equal(t, 10, strings.Count(out, `"stage":"done"`))
	assert.Contains(t, out, `"phase":"build","duration":9800000000`)
}

// TestLogHandler: records at or above the level become events with their
// attributes flattened (groups, WithAttrs) and rewritten by replace.
func TestLogHandler(t *testing.T) {
	var got []Event
	sink := sinkFunc(func(e Event) { got = append(got, e) })
	redact := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "secret" {
			a.Value = slog.StringValue("***")
		}
		return a
	}
	logger := slog.New(LogHandler(sink, KindLog, slog.LevelWarn, redact))
	logger.Info("not shown")
	logger.With("image", "helper").WithGroup("g").Warn("cache prune", "error", "denied", "secret", "pw", slog.Group("sub", "n", 2))
	require.Len(t, got, 1)
	assert.Equal(t, Event{Kind: KindLog, Level: "WARN", Message: "cache prune", Fields: []Field{
		{Key: "image", Value: "helper"}, {Key: "g.error", Value: "denied"}, {Key: "g.secret", Value: "***"}, {Key: "g.sub.n", Value: "2"}}}, got[0])
}

type sinkFunc func(Event)

func (f sinkFunc) Event(e Event) { f(e) }

// TestReporterAfterClose: events after Close are dropped, Close runs once.
func TestReporterAfterClose(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	rep := NewReporter(NewJSON(&b), c.now)
	rep.Close(nil)
	rep.Close(errors.New("again"))
	rep.Event(Event{Kind: KindLog, Message: "late"})
	assert.Equal(t, 1, strings.Count(b.String(), "\n"))
	assert.NotContains(t, b.String(), "late")
}
