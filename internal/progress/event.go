package progress

import (
	"sync"
	"time"
)

// Kind says what an Event reports.
type Kind string

const (
	// KindStart opens the run: Message is the command, Images,
	// Platforms, Binaries and Destination say what goes where.
	KindStart Kind = "start"
	// KindPhaseStart and KindPhaseEnd bracket one phase (Phase: resolve,
	// build, publish); Message is the phase's header (start) or outcome
	// (end), Duration its time (end). The resolve phase's end lists the
	// Platforms (a config-free run's come from its base).
	KindPhaseStart Kind = "phase-start"
	KindPhaseEnd   Kind = "phase-end"
	// KindStage is one image × platform (Image, Platform) entering Stage.
	KindStage Kind = "stage"
	// KindCompiled is a platform's binaries built (Platform, Count,
	// Duration), UpToDate of them served whole from go's build cache
	// (nothing compiled or linked).
	KindCompiled Kind = "compiled"
	// KindBytes is the bytes of one image × platform sent so far (Bytes).
	KindBytes Kind = "bytes"
	// KindLog is a logged detail (Level, Message, Fields).
	KindLog Kind = "log"
	// KindRetry is a request retried or an upload restarted (Message,
	// Fields).
	KindRetry Kind = "retry"
)

// Stage is where one image × platform is.
type Stage string

const (
	Waiting   Stage = "waiting"
	Compiling Stage = "compiling"
	Writing   Stage = "writing layer"
	Checking  Stage = "checking"
	Uploading Stage = "uploading"
	Done      Stage = "done"
	Failed    Stage = "failed"
)

// Field is one key=value of a logged detail.
type Field struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Event is one thing that happened. Which fields are set depends on Kind.
type Event struct {
	Time     time.Time     `json:"time"`
	Kind     Kind          `json:"kind"`
	Phase    string        `json:"phase,omitempty"`
	Image    string        `json:"image,omitempty"`
	Platform string        `json:"platform,omitempty"`
	Stage    Stage         `json:"stage,omitempty"`
	Digest   string        `json:"digest,omitempty"`   // full, sha256:...
	Bytes    int64         `json:"bytes,omitempty"`    // sent so far
	Total    int64         `json:"total,omitempty"`    // size: to send (uploading) or compressed image size (done)
	Count    int           `json:"count,omitempty"`    // binaries (compiled), layer number (writing layer), layers written anew (done)
	Of       int           `json:"of,omitempty"`       // layers to write (writing layer), every layer of the image (done)
	UpToDate int           `json:"upToDate,omitempty"` // binaries go build found up to date (compiled)
	Upload   bool          `json:"upload,omitempty"`   // the blobs went to a registry; Bytes is what was sent (done)
	Duration time.Duration `json:"duration,omitempty"` // nanoseconds in JSON
	Level    string        `json:"level,omitempty"`    // log: INFO, WARN, ERROR
	Message  string        `json:"message,omitempty"`
	Fields   []Field       `json:"fields,omitempty"`

	// KindStart only.
	Images      []string `json:"images,omitempty"`
	Platforms   []string `json:"platforms,omitempty"`
	Binaries    []string `json:"binaries,omitempty"`
	Destination string   `json:"destination,omitempty"`
	// AllPlatforms says which platforms a run builds that lists none
	// (default: "every platform the base offers").
	AllPlatforms string `json:"allPlatforms,omitempty"`
}

// Sink takes events; it must be safe for concurrent use.
type Sink interface {
	Event(Event)
}

// Discard is a Sink that drops every event.
var Discard Sink = discard{}

type discard struct{}

func (discard) Event(Event) {}

// Renderer shows events. A Reporter calls it from one goroutine at a time,
// with the time already stamped, so it needs no lock and no clock.
type Renderer interface {
	Render(e Event)
	// Tick redraws what changes with time alone (the TTY's elapsed times
	// and byte counts); now is the Reporter's clock.
	Tick(now time.Time)
	// Close shows the final state; err is the run's outcome.
	Close(now time.Time, err error)
}

// Reporter is the Sink a run uses: it stamps each event with its clock and
// renders it, without the query of any URL in its text (Redact).
// It also times what the sender did not: a phase's end gets the time since
// its start, a platform's KindCompiled the time since its first unit
// entered Compiling.
type Reporter struct {
	mu        sync.Mutex
	now       func() time.Time
	r         Renderer
	closed    bool
	phases    map[string]time.Time
	compiling map[string]time.Time
}

// NewReporter renders events with r, stamped by now (time.Now in the
// command, a fake clock in tests).
func NewReporter(r Renderer, now func() time.Time) *Reporter {
	return &Reporter{r: r, now: now, phases: map[string]time.Time{}, compiling: map[string]time.Time{}}
}

// Event stamps e and renders it; after Close it does nothing.
func (p *Reporter) Event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	e.Time = p.now()
	switch {
	case e.Kind == KindPhaseStart:
		p.phases[e.Phase] = e.Time
	case e.Kind == KindPhaseEnd && e.Duration == 0:
		if t, ok := p.phases[e.Phase]; ok {
			e.Duration = e.Time.Sub(t)
		}
	case e.Kind == KindStage && e.Stage == Compiling:
		if _, ok := p.compiling[e.Platform]; !ok {
			p.compiling[e.Platform] = e.Time
		}
	case e.Kind == KindCompiled && e.Duration == 0:
		if t, ok := p.compiling[e.Platform]; ok {
			e.Duration = e.Time.Sub(t)
		}
	}
	p.r.Render(redact(e))
}

// Tick lets the renderer redraw what changes with time.
func (p *Reporter) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.r.Tick(p.now())
	}
}

// Close shows the final state once; err is the run's outcome.
func (p *Reporter) Close(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.r.Close(p.now(), err)
}
