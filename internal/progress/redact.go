package progress

import (
	"io"
	"log/slog"
	"regexp"
)

// urlQuery is the query of a URL in a message.
var urlQuery = regexp.MustCompile(`(https?://[^\s"?]+)\?[^\s"]*`)

// Redact drops the query of every URL in s: a registry's blob upload
// location carries the upload session's state there (?_state=...), which
// must not reach a log. Everything the progress renderers show passes
// through it; the command's error line and its logger use it too.
func Redact(s string) string { return urlQuery.ReplaceAllString(s, "$1") }

// redact is e with Redact applied to its message and its fields' values.
func redact(e Event) Event {
	e.Message = Redact(e.Message)
	if len(e.Fields) > 0 {
		fields := make([]Field, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = Field{Key: f.Key, Value: Redact(f.Value)}
		}
		e.Fields = fields
	}
	return e
}

// NewLogger writes a run's log to w (stderr, when no renderer takes it) as
// plain key=value lines, without times and without the query of any URL
// in them (RedactAttr).
func NewLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: RedactAttr}))
}

// RedactAttr is a slog ReplaceAttr that drops a record's time and the
// query of any URL in a value (a string, or an error's message); give it
// to LogHandler so a logged detail is as redacted as an event.
func RedactAttr(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	switch v := a.Value.Resolve(); {
	case v.Kind() == slog.KindString:
		a.Value = slog.StringValue(Redact(v.String()))
	case v.Kind() == slog.KindAny:
		if err, ok := v.Any().(error); ok {
			a.Value = slog.StringValue(Redact(err.Error()))
		}
	}
	return a
}
