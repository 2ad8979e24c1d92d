package progress

import (
	"encoding/json"
	"io"
	"time"
)

// JSON writes every event as one line of JSON, and at the end one
// {"kind":"end"} line with the run's error, if any.
type JSON struct {
	enc *json.Encoder
}

// NewJSON writes to w.
func NewJSON(w io.Writer) *JSON { return &JSON{enc: json.NewEncoder(w)} }

func (j *JSON) Render(e Event) { _ = j.enc.Encode(e) }

func (j *JSON) Tick(time.Time) {}

func (j *JSON) Close(now time.Time, err error) {
	end := struct {
		Time  time.Time `json:"time"`
		Kind  string    `json:"kind"`
		Error string    `json:"error,omitempty"`
	}{Time: now, Kind: "end"}
	if err != nil {
		end.Error = Redact(err.Error())
	}
	_ = j.enc.Encode(end)
}

// Quiet shows nothing while the run goes well; when it fails, it writes
// the retries, warnings and failures it kept, as Plain would (the error
// itself is the command's to print).
type Quiet struct {
	w    io.Writer
	kept []Event
}

// NewQuiet writes to w.
func NewQuiet(w io.Writer) *Quiet { return &Quiet{w: w} }

func (q *Quiet) Render(e Event) {
	if alert(e) || e.Kind == KindStage && e.Stage == Failed {
		q.kept = append(q.kept, e)
	}
}

func (q *Quiet) Tick(time.Time) {}

func (q *Quiet) Close(now time.Time, err error) {
	if err == nil {
		return
	}
	p := NewPlain(q.w, false)
	for _, e := range q.kept {
		p.render(e)
	}
}
