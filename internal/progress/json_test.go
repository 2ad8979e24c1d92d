package progress

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
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

// TestCountingTransport: go-containerregistry's upload of a layer through
// the transport counts the layer's compressed bytes once, as they go out,
// only for the context that carries the counter; CarryCounter moves the
// counter to another context.
func TestCountingTransport(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://")+"/test/app", name.Insecure)
	require.NoError(t, err)
	pusher, err := remote.NewPusher(remote.WithTransport(CountingTransport(srv.Client().Transport)))
	require.NoError(t, err)

	l, err := random.Layer(300_000, "application/vnd.oci.image.layer.v1.tar+gzip")
	require.NoError(t, err)
	size, err := l.Size()
	require.NoError(t, err)
	var sent atomic.Int64
	hookCtx := WithCounter(context.Background(), func(n int64) { sent.Add(n) })
	ctx := CarryCounter(t.Context(), hookCtx)
	require.NoError(t, pusher.Upload(ctx, repo, l))
	assert.Equal(t, size, sent.Load())

	// Uploaded again: the registry has it, nothing is sent.
	require.NoError(t, pusher.Upload(ctx, repo, l))
	assert.Equal(t, size, sent.Load())

	// Without a counter nothing is counted.
	l2, err := random.Layer(1000, "application/vnd.oci.image.layer.v1.tar+gzip")
	require.NoError(t, err)
	require.NoError(t, pusher.Upload(t.Context(), repo, l2))
	assert.Equal(t, size, sent.Load())
	assert.Equal(t, t.Context(), CarryCounter(t.Context(), context.Background()))
}

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
