package release

import (
	"context"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// hooks let this package's tests wait for the events whose order a loaded
// machine would otherwise leave to chance. Options.hooks is nil outside
// tests; so may be any field.
type hooks struct {
	// assembling runs once unit p's assembly holds its job slot, on the
	// thread that does the work and before any of it. background says that
	// links still run: the work then runs at low priority and streams
	// nothing.
	assembling func(ctx context.Context, p v1.Platform, background bool)
}

func (h *hooks) onAssembling(ctx context.Context, p v1.Platform, background bool) {
	if h != nil && h.assembling != nil {
		h.assembling(ctx, p, background)
	}
}
