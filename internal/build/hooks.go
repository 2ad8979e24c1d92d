package build

import (
	"context"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// hooks let this package's tests wait for the events whose order a loaded
// machine would otherwise leave to chance. Options.hooks is nil outside
// tests; so may be any field.
type hooks struct {
	// assembling runs once unit p's assembly holds its job slot, on the
	// goroutine that does the work and before any of it. background says
	// that links still run: the work then compresses on one goroutine and
	// streams nothing.
	assembling func(ctx context.Context, p v1.Platform, background bool)
	// compiled runs when a binary for p has been compiled and checked,
	// before the release counts it (and may start p's assembly).
	compiled func(ctx context.Context, p v1.Platform)
}

func (h *hooks) onCompiled(ctx context.Context, p v1.Platform) {
	if h != nil && h.compiled != nil {
		h.compiled(ctx, p)
	}
}

func (h *hooks) onAssembling(ctx context.Context, p v1.Platform, background bool) {
	if h != nil && h.assembling != nil {
		h.assembling(ctx, p, background)
	}
}
