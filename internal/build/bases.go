package build

import (
	"context"
	"fmt"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// bases resolves each base reference once per run, so every platform of
// every image that names it sees the same pinned digest.
type bases struct {
	opts imageref.Options
	mu   sync.Mutex
	refs map[string]*imageref.Artifact
}

func newBases(opts imageref.Options) *bases {
	return &bases{opts: opts, refs: map[string]*imageref.Artifact{}}
}

// resolve reads every reference in refs that is not yet known, in parallel.
func (b *bases) resolve(ctx context.Context, refs []string, jobs int) error {
	// Artifacts keep the context they were read with for later lazy
	// fetches, so they get the run's context, not the group's.
	var g errgroup.Group
	g.SetLimit(jobs)
	seen := map[string]bool{}
	for _, s := range refs {
		b.mu.Lock()
		_, known := b.refs[s]
		b.mu.Unlock()
		if known || seen[s] {
			continue
		}
		seen[s] = true
		g.Go(func() error {
			ref, err := imageref.Parse(s, b.opts.Insecure)
			if err != nil {
				return &InputError{fmt.Errorf("base image: %w", err)}
			}
			a, err := registry.Read(ctx, ref, b.opts)
			if err != nil {
				return fmt.Errorf("base image %w", err)
			}
			b.mu.Lock()
			b.refs[s] = a
			b.mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

func (b *bases) get(ref string) *imageref.Artifact {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refs[ref]
}

// buildablePlatforms is every platform a base offers that Go can build,
// Windows entries left out: those are asked for by name, one per Windows
// release (--platforms windows/amd64:10.0.20348), never by "all".
func buildablePlatforms(a *imageref.Artifact) ([]v1.Platform, error) {
	offered, err := a.Platforms()
	if err != nil {
		return nil, err
	}
	var out []v1.Platform
	for _, p := range offered {
		if platform.Buildable(p) && !platform.IsWindows(p) && platform.Index(out, p) < 0 {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("base %s offers no platform Go can build (it has: %s); give --platforms", a.Ref, platform.FormatList(offered))
	}
	return out, nil
}

// count is how many base references were resolved (scratch is none).
func (b *bases) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.refs)
}
