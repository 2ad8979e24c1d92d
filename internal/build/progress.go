package build

import (
	"context"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// stage sends unit (image, p)'s new stage; e carries its details.
func (o *Options) stage(image string, p v1.Platform, s progress.Stage, e progress.Event) {
	e.Kind, e.Image, e.Platform, e.Stage = progress.KindStage, image, platform.Format(p), s
	o.Progress.Event(e)
}

// phase sends the start or end of a phase of the release.
func (o *Options) phase(kind progress.Kind, name, message string) {
	o.Progress.Event(progress.Event{Kind: kind, Phase: name, Message: message})
}

// bytesStep is how many more bytes a unit sends before its count is
// reported again.
const bytesStep = 256 << 10

// uploads counts the bytes one unit's uploads send (see
// registry.WithCounter), reporting them in steps of bytesStep.
type uploads struct {
	opts     *Options
	image    string
	platform v1.Platform

	mu         sync.Mutex
	sent, told int64
}

// context is ctx carrying the counter.
func (u *uploads) context(ctx context.Context) context.Context {
	return registry.WithCounter(ctx, u.add)
}

func (u *uploads) add(n int64) {
	u.mu.Lock()
	u.sent += n
	sent := u.sent
	tell := sent-u.told >= bytesStep
	if tell {
		u.told = sent
	}
	u.mu.Unlock()
	if tell {
		u.opts.Progress.Event(progress.Event{Kind: progress.KindBytes, Image: u.image, Platform: platform.Format(u.platform), Bytes: sent})
	}
}

func (u *uploads) total() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sent
}

// newBlobsSize is the compressed size of the blobs of img the release
// wrote: its config and its layers after the base's first baseLayers,
// what an upload sends when the registry has none of them.
func newBlobsSize(img v1.Image, baseLayers int) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	n := manifest.CompressedSize(m)
	for _, l := range m.Layers[:min(baseLayers, len(m.Layers))] {
		n -= l.Size
	}
	return n, nil
}
