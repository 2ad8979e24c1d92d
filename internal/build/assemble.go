package build

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/layer"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/rootfs"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// assembler builds each unit's image once its platform's binaries exist.
type assembler struct {
	plan   *recipe.Plan
	units  [][]unit
	bases  *bases
	binDir string
	cache  *layer.Cache
	opts   Options
	flat   flatBases // each base's filesystem, flattened once
	attest *attestor // nil: no attestations
	found  *checkFindings

	// schedule runs assemble(i, j, true) beside the compiles.
	schedule func(i, j int)

	slots *slots // when layer work may run beside the compiles, on how many goroutines

	mu       sync.Mutex
	pending  []int                    // [plan platform] binaries not yet compiled
	binaries []int                    // [plan platform] binaries to compile
	upToDate []int                    // [plan platform] binaries go build found up to date (nothing compiled)
	layers   layerCount               // every unit's layers, for the build's last line
	compiles []bool                   // [plan platform] a compile has started
	images   [][]v1.Image             // [image][platform], nil until assembled
	checks   [][][]verify.Check       // [image][platform], set with images
	attests  [][]*product.Attestation // [image][platform], set with images when attest is set
}

// newAssembler waits for the binaries of targetPlatforms: each one's index
// in plan.Platforms.
func newAssembler(plan *recipe.Plan, units [][]unit, b *bases, binDir string, cache *layer.Cache, opts Options, targetPlatforms []int, at *attestor) *assembler {
	a := &assembler{plan: plan, units: units, bases: b, binDir: binDir, cache: cache, opts: opts, attest: at,
		slots: newSlots(opts.Jobs, len(targetPlatforms)), pending: make([]int, len(plan.Platforms)),
		images: make([][]v1.Image, len(units)), checks: make([][][]verify.Check, len(units)),
		binaries: make([]int, len(plan.Platforms)), compiles: make([]bool, len(plan.Platforms)), upToDate: make([]int, len(plan.Platforms)),
		attests: make([][]*product.Attestation, len(units)), found: newCheckFindings(units)}
	a.flat.readOS, a.flat.store = at != nil, newFlatStore(cache)
	for i := range units {
		a.images[i] = make([]v1.Image, len(units[i]))
		a.checks[i] = make([][]verify.Check, len(units[i]))
		a.attests[i] = make([]*product.Attestation, len(units[i]))
	}
	for _, k := range targetPlatforms {
		a.pending[k]++
		a.binaries[k]++
	}
	return a
}

// compiling records that a binary for plan platform k starts compiling:
// the first one moves its units to the compiling stage.
func (a *assembler) compiling(k int) {
	a.mu.Lock()
	first := !a.compiles[k]
	a.compiles[k] = true
	a.mu.Unlock()
	if first {
		a.eachUnit(k, func(i, _ int, u unit) {
			a.opts.stage(a.plan.Images[i].Name, u.platform, progress.Compiling, progress.Event{})
		})
	}
}

// eachUnit calls f for each unit of plan platform k.
func (a *assembler) eachUnit(k int, f func(i, j int, u unit)) {
	p := a.plan.Platforms[k].Platform
	for i := range a.units {
		for j, u := range a.units[i] {
			if platform.Equal(u.platform, p) {
				f(i, j, u)
			}
		}
	}
}

// compiled records one binary for plan platform k (upToDate: go build
// compiled nothing for it); the last one schedules its units.
func (a *assembler) compiled(k int, upToDate bool) {
	a.slots.compiled()
	a.mu.Lock()
	a.pending[k]--
	if upToDate {
		a.upToDate[k]++
	}
	last := a.pending[k] == 0
	a.mu.Unlock()
	if !last {
		return
	}
	p := a.plan.Platforms[k].Platform
	a.opts.Progress.Event(progress.Event{Kind: progress.KindCompiled, Platform: platform.Format(p), Count: a.binaries[k], UpToDate: a.upToDate[k]})
	a.eachUnit(k, func(i, j int, u unit) {
		// Compiled: the unit waits for a slot to write its layers.
		a.opts.stage(a.plan.Images[i].Name, u.platform, progress.Waiting, progress.Event{})
		a.schedule(i, j)
	})
}

// rest assembles every unit not assembled yet; a unit that fails its
// checks does not stop the others (see checkFindings).
func (a *assembler) rest(ctx context.Context) error {
	for i := range a.units {
		for j := range a.units[i] {
			a.mu.Lock()
			done := a.images[i][j] != nil
			a.mu.Unlock()
			done = done || a.found.ended(i, j)
			if !done {
				if err := a.assemble(ctx, i, j, false); err != nil && !a.found.gather(ctx, i, j, err) {
					return err
				}
			}
		}
	}
	return nil
}

// assemble builds and checks unit (i, j), then hands it to OnImage. With
// gated (beside the compiles) the building waits for a job slot no compile
// needs; while links still run it compresses on one goroutine. Once
// nothing compiles, the release waits for this unit: its layers are
// compressed on every core and go to OnLayer while they are written (see
// streams). Every thread stays at the process's priority (see
// docs/bench-2026-12-01.md for why). The hand-off (push's upload, which
// mostly waits on the network) runs outside the slot.
func (a *assembler) assemble(ctx context.Context, i, j int, gated bool) error {
	u := a.units[i][j]
	name := a.plan.Images[i].Name
	compiling := false
	if gated {
		compiling = a.slots.acquire()
	}
	up := &uploads{opts: &a.opts, image: name, platform: u.platform}
	uctx := up.context(ctx)
	var st *streams
	var follow func(*layer.Stream)
	if !compiling && a.opts.OnLayer != nil {
		st = &streams{upload: func(l v1.Layer) error {
			return a.unitErr(i, j, a.opts.OnLayer(uctx, name, u.platform, l))
		}}
		follow = st.follow
	}
	a.opts.hooks.onAssembling(ctx, u.platform, compiling)
	var img v1.Image
	var fresh int
	err := context.Cause(ctx) // the build failed or was interrupted while this unit waited for its slot
	if err == nil {
		img, fresh, err = a.build(ctx, i, j, follow)
	}
	if gated {
		a.slots.release()
	}
	if err == nil && (st != nil || a.opts.OnImage != nil) && a.found.failed() {
		err = errHeldBack // the run fails: nothing more to upload
	}
	if err == nil && (st != nil || a.opts.OnImage != nil) {
		a.uploading(i, j, img, up)
	}
	// The attestations' blobs go up beside the image's (uncounted: the
	// unit's bytes are its image's, as the uploading stage's total says).
	var attUp errgroup.Group
	if err == nil && a.opts.OnImage != nil {
		for _, art := range a.artifacts(i, j) {
			attUp.Go(func() error { return a.unitErr(i, j, a.opts.OnImage(ctx, name, u.platform, art)) })
		}
	}
	if st != nil {
		err = st.end(err) // waits for the streamed layers' uploads
	}
	if err == nil && a.opts.OnImage != nil {
		err = a.unitErr(i, j, a.opts.OnImage(uctx, name, u.platform, img))
	}
	if aerr := attUp.Wait(); err == nil {
		err = aerr
	}
	a.finished(ctx, i, j, img, fresh, up, err)
	return err
}

// artifacts are the images that carry unit (i, j)'s attestations (its
// attestation manifest, or its referrers); none without attestations.
func (a *assembler) artifacts(i, j int) []v1.Image {
	a.mu.Lock()
	at := a.attests[i][j]
	a.mu.Unlock()
	if at == nil {
		return nil
	}
	var out []v1.Image
	if at.Manifest != nil {
		out = append(out, at.Manifest)
	}
	for _, r := range at.Referrers {
		out = append(out, r)
	}
	return out
}

// uploading reports unit (i, j) checked and uploading: the rest of its
// streamed layers, then (OnImage) its other blobs.
func (a *assembler) uploading(i, j int, img v1.Image, up *uploads) {
	u := a.units[i][j]
	total, _ := newBlobsSize(img, baseLayers(u))
	a.opts.stage(a.plan.Images[i].Name, u.platform, progress.Uploading, progress.Event{Bytes: up.total(), Total: total})
}

// baseLayers is how many of u's layers come from its base.
func baseLayers(u unit) int {
	if u.base == nil {
		return 0
	}
	ls, err := u.base.Layers()
	if err != nil {
		return 0
	}
	return len(ls)
}

// finished reports unit (i, j) done (its digest, compressed size, its
// layers and how many of them were written anew, and for a registry the
// bytes its uploads sent: none when the registry had every blob) or failed.
func (a *assembler) finished(ctx context.Context, i, j int, img v1.Image, fresh int, up *uploads, err error) {
	u := a.units[i][j]
	name := a.plan.Images[i].Name
	if err != nil {
		msg := err.Error()
		if ctx.Err() != nil {
			msg = "stopped: " + context.Cause(ctx).Error() // another unit failed, or the run was interrupted
		}
		a.opts.stage(name, u.platform, progress.Failed, progress.Event{Message: msg, Bytes: up.total()})
		return
	}
	e := progress.Event{Bytes: up.total(), Upload: a.opts.OnImage != nil, Count: fresh}
	if d, derr := img.Digest(); derr == nil {
		e.Digest = d.String()
	}
	if m, merr := img.Manifest(); merr == nil {
		e.Total, e.Of = manifest.CompressedSize(m), len(m.Layers)
	}
	a.layers.add(e.Of, fresh, e.Upload, e.Bytes)
	a.opts.stage(name, u.platform, progress.Done, e)
}

// layerCount adds up the layers of every unit: how many, how many written
// anew, and for a registry the bytes sent.
type layerCount struct {
	mu         sync.Mutex
	all, fresh int
	upload     bool
	sent       int64
}

func (c *layerCount) add(all, fresh int, upload bool, sent int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all, c.fresh, c.upload, c.sent = c.all+all, c.fresh+fresh, c.upload || upload, c.sent+sent
}

// outcome is the build's last line: binaries compiled and up to date,
// images, layers written anew and reused, and for a registry what was
// uploaded; nothing is counted that did not happen.
func (a *assembler) outcome(binaries, images int) string {
	upToDate := 0
	a.mu.Lock()
	for _, n := range a.upToDate {
		upToDate += n
	}
	a.mu.Unlock()
	s := progress.Count(binaries, "binary", "binaries")
	if upToDate > 0 {
		s += progress.Split(binaries-upToDate, "compiled", upToDate, "up to date in go's cache")
	}
	s += ", " + progress.Count(images, "image", "images") + " built and checked"
	c := &a.layers
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.all > 0 {
		s += ", " + progress.Count(c.all, "layer", "layers") + progress.Split(c.fresh, "new", c.all-c.fresh, "reused")
	}
	if c.upload {
		s += ", " + progress.Uploaded(c.sent)
	}
	return s
}

// unitErr names unit (i, j) in err; nil stays nil.
func (a *assembler) unitErr(i, j int, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("image %s for %s: %w", a.plan.Images[i].Name, platform.Format(a.units[i][j].platform), err)
}

// build assembles unit (i, j) and checks it, before any of its blobs
// leaves the machine (a streamed layer's upload commits only once its
// Stream is allowed), and records both. follow, if set, receives each
// layer written anew.
func (a *assembler) build(ctx context.Context, i, j int, follow func(*layer.Stream)) (v1.Image, int, error) {
	u := a.units[i][j]
	lopts := layer.Options{Threads: a.slots.threads(), Follow: follow}
	if a.attest != nil {
		lopts.Hashed = a.attest.hashed // the SBOM's binary digests, from the cache key's pass
	}
	img, entries, fresh, err := assembleUnit(ctx, a.plan, u, a.bases, &a.flat, a.binDir, a.cache, a.opts, lopts)
	if err != nil {
		return nil, 0, a.unitErr(i, j, err)
	}
	a.opts.stage(a.plan.Images[i].Name, u.platform, progress.Checking, progress.Event{})
	checks, err := verifyPlatform(ctx, a.plan.Images[i].Name, a.plan.Images[i].Contract, u.platform, img, builtPaths(entries, a.binDir), a.opts)
	if err != nil {
		return nil, 0, err
	}
	var at *product.Attestation
	if a.attest != nil {
		if at, err = a.attestUnit(ctx, i, j, img, entries); err != nil {
			return nil, 0, a.unitErr(i, j, fmt.Errorf("attestations: %w", err))
		}
	}
	a.mu.Lock()
	a.images[i][j], a.checks[i][j], a.attests[i][j] = img, checks, at
	a.mu.Unlock()
	return img, fresh, nil
}

// attestUnit writes the attestations of unit (i, j), whose image is img
// and whose layers hold entries.
func (a *assembler) attestUnit(ctx context.Context, i, j int, img v1.Image, entries []rootfs.Entry) (*product.Attestation, error) {
	u := a.units[i][j]
	f := unitFacts{name: a.plan.Images[i].Name, binDir: a.binDir, entries: entries}
	if u.base != nil {
		os, bins, skipped, err := a.flat.contents(ctx, u.baseDig, u.base)
		if err != nil {
			return nil, err
		}
		f.os, f.baseBins, f.baseSkipped = os, notWritten(bins, entries), skipped
		ba := a.bases.get(u.baseRef)
		f.base = attest.Base{Ref: pinnedName(ba), Digest: u.baseDig,
			Layout: ba != nil && (ba.Ref.Transport == imageref.Layout || ba.Ref.Transport == imageref.Archive)}
	}
	at, times, err := a.attest.attestUnit(img, u.platform, f)
	if err == nil {
		a.opts.Logger.Info("attested", "image", f.name, "platform", platform.Format(u.platform),
			"sbom", times.sbom.Round(time.Microsecond), "provenance", times.provenance.Round(time.Microsecond))
	}
	return at, err
}

// notWritten are the base binaries whose paths entries (the unit's own
// layers) do not write: the image holds those.
func notWritten(bins []attest.Binary, entries []rootfs.Entry) []attest.Binary {
	written := map[string]bool{}
	for _, e := range entries {
		written[e.Path] = true
	}
	var out []attest.Binary
	for _, b := range bins {
		if !written[b.Path] {
			out = append(out, b)
		}
	}
	return out
}

// checked gives verify.Index the checks verifyPlatform ran on image i's
// platforms, so the index check reads no layer again.
func (a *assembler) checked(i int) func(v1.Hash, v1.Platform) ([]verify.Check, bool) {
	return func(d v1.Hash, p v1.Platform) ([]verify.Check, bool) {
		a.mu.Lock()
		defer a.mu.Unlock()
		for j, u := range a.units[i] {
			if img := a.images[i][j]; img != nil && platform.Equal(u.platform, p) {
				if got, err := img.Digest(); err == nil && got == d {
					return a.checks[i][j], true
				}
			}
		}
		return nil, false
	}
}
