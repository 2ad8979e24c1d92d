package progress

import (
	"context"
	"log/slog"
	"slices"
)

// LogHandler is a slog.Handler that sends each record at or above level
// to sink as an Event of kind (KindLog for details and warnings, KindRetry
// for a retry package's logger). replace, if set, rewrites each attribute
// first, as slog.HandlerOptions.ReplaceAttr does (the command drops URL
// queries there).
func LogHandler(sink Sink, kind Kind, level slog.Leveler, replace func(groups []string, a slog.Attr) slog.Attr) slog.Handler {
	return &logHandler{sink: sink, kind: kind, level: level, replace: replace}
}

type logHandler struct {
	sink    Sink
	kind    Kind
	level   slog.Leveler
	replace func([]string, slog.Attr) slog.Attr
	attrs   []Field
	groups  []string
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	fields := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		fields = h.add(fields, h.groups, a)
		return true
	})
	h.sink.Event(Event{Kind: h.kind, Level: r.Level.String(), Message: r.Message, Fields: fields})
	return nil
}

// add appends a (flattened, group.key=value) to fields.
func (h *logHandler) add(fields []Field, groups []string, a slog.Attr) []Field {
	if h.replace != nil && a.Value.Kind() != slog.KindGroup {
		a = h.replace(groups, a)
	}
	v := a.Value.Resolve()
	if a.Key == "" && v.Kind() != slog.KindGroup {
		return fields
	}
	if v.Kind() == slog.KindGroup {
		sub := groups
		if a.Key != "" {
			sub = append(slices.Clip(groups), a.Key)
		}
		for _, g := range v.Group() {
			fields = h.add(fields, sub, g)
		}
		return fields
	}
	key := a.Key
	for i := len(groups) - 1; i >= 0; i-- {
		key = groups[i] + "." + key
	}
	return append(fields, Field{Key: key, Value: v.String()})
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		c.attrs = h.add(c.attrs, h.groups, a)
	}
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(slices.Clip(h.groups), name)
	return &c
}
