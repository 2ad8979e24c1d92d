package release

import (
	"context"
	"fmt"

	"github.com/helperbuild/helperbuild/internal/build"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/publish"
)

// Run prepares req and executes it, reporting to obs: the whole build or push, its files
// written, its report returned.
func Run(ctx context.Context, req Request, obs Observer) (*Report, error) {
	p, err := Prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return p.Execute(ctx, obs)
}

// runState is what one execution holds while it runs.
type runState struct {
	tmp    string
	images imageref.Options // on the retry transport
}

// Execute builds, publishes (tags last) and writes the output files,
// reporting as it goes to obs. An error after the tags were written is an
// *OutputError, and the report is still returned.
func (p *Prepared) Execute(ctx context.Context, obs Observer) (*Report, error) {
	p.Observer = obs.defaults()
	e := progress.Event{Kind: progress.KindStart, Message: p.Command, Destination: p.Dest.String()}
	for _, img := range p.Plan.Images {
		e.Images = append(e.Images, img.Name)
	}
	for _, pl := range p.Plan.Platforms {
		e.Platforms = append(e.Platforms, platform.Format(pl.Platform))
	}
	for _, b := range p.Plan.Binaries {
		e.Binaries = append(e.Binaries, b.Main)
	}
	p.Progress.Event(e)
	s, err := openSession(p.Registry, "run", p.CacheDir, p.Logger, p.RetryLogger)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	r := &runState{tmp: s.tmp, images: s.images}
	dest, err := p.open(ctx, s)
	if err != nil {
		return nil, err
	}
	res, err := build.Build(ctx, p.Plan, p.buildOptions(ctx, r, dest))
	if err != nil {
		return nil, asInput(err)
	}
	rep, err := finish(ctx, tail{Observer: p.Observer, dest: dest, where: p.Dest.Where, path: p.Dest.Output.Path, single: p.Dest.single,
		header: p.Dest.publishHeader(), outputs: p.Outputs, signer: p.signer}, res)
	if rep != nil {
		rep.DefaultBase = p.Package.DefaultBase
	}
	return rep, err
}

// buildOptions are Build's options for this run, with dest's hooks.
func (p *Prepared) buildOptions(ctx context.Context, r *runState, dest destination) build.Options {
	hooks := dest.Hooks(ctx)
	return build.Options{
		Env:              p.Env,
		Jobs:             p.Jobs,
		CompressionLevel: p.CompressionLevel,
		Meta:             p.Meta,
		Images:           r.images,
		TempDir:          r.tmp,
		CacheDir:         p.CacheDir,
		Attest:           p.AttestOptions,
		Run:              p.Run,
		Logger:           p.Logger,
		Progress:         p.Progress,
		Preflight:        hooks.Preflight,
		OnImage:          hooks.OnImage,
		OnLayer:          hooks.OnLayer,
	}
}

// tail is how a run ends, the same for build, push and merge (and a join
// of existing images): publish, report, write the output files.
type tail struct {
	Observer
	dest    destination
	where   Where
	path    string // a layout's or archive's
	single  bool   // a config-free layout's entries are named by tag alone
	header  string // the publish phase's opening line
	outputs Outputs
	signer  *Signer // the bundles it made go to --attest-dir; nil: unsigned
}

// finish publishes res at t.dest (tags last), names what it published and
// writes every output file; the report says what happened.
func finish(ctx context.Context, t tail, res *product.Result) (*Report, error) {
	var images []publish.Image
	for _, img := range res.Images {
		images = append(images, img.Publish())
	}
	t.phase(progress.KindPhaseStart, "publish", t.header)
	if err := t.dest.Publish(ctx, images); err != nil {
		return nil, err
	}
	t.phase(progress.KindPhaseEnd, "publish", outcome(res, t.where == Pending))
	rep := newReport(res, t)
	if err := rep.write(t.outputs); err != nil {
		return rep, err
	}
	return rep, nil
}

// outcome closes the publish phase (and merge's check phase); byDigest
// pushed platform manifests only: merge writes the indexes.
func outcome(res *product.Result, byDigest bool) string {
	indexes, manifests := len(res.Images), 0
	if byDigest {
		indexes = 0
	}
	for _, img := range res.Images {
		manifests += len(img.Platforms)
	}
	return fmt.Sprintf("%d %s, %d %s", indexes, progress.Plural(indexes, "index", "indexes"), manifests, progress.Plural(manifests, "manifest", "manifests"))
}
