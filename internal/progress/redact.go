package progress

import "regexp"

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
