package build

import (
	"cmp"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// Attest configures the attestations of a release (release's index
// request uses Mode, HelperbuildVersion and CI too); release fills it from
// the command's request. Zero Mode writes none.
type Attest struct {
	Mode       product.AttestMode
	Provenance attest.ProvenanceMode
	// Source is the git checkout (URL, ref, full commit); Recipe the
	// helperbuild.yaml, relative to the source root.
	Source attest.Source
	Recipe attest.Recipe
	// Package is the config-free release's main package as asked for
	// (its Base is filled in per image); nil with a recipe.
	Package *attest.Package
	// CI is the GitLab CI job, zero outside CI.
	CI attest.CI
	// HelperbuildVersion names the tool in both documents.
	HelperbuildVersion string
	// Images and Platforms are the whole release's, for the provenance,
	// when this build is only a share of it (push --by-digest); nil: the
	// plan's.
	Images    []string
	Platforms []v1.Platform
	// Now is the clock for ProvenanceMax's start and finish times; nil
	// means time.Now. Nothing else reads it.
	Now func() time.Time
	// Complete, when set, fills in what only the source checkout can say
	// (Source, Recipe, Package: git's answers) during the resolve phase,
	// beside the compiles and the registry's round trips, so that a start
	// waits for no git command when the release's names are given (issue
	// 41). Its error fails the run as the preflight's does, before
	// anything of the compiles shows.
	Complete func(ctx context.Context, a *Attest) error
}

func (a Attest) on() bool { return a.Mode.On() }

// attestor writes each platform image's attestations; nil when the
// release writes none.
type attestor struct {
	opts Attest
	// goVersion is the go command's GOVERSION, asked for only when the
	// binaries do not say which Go built them (see toolchain).
	goVersion func() (string, error)
	goflags   string
	plan      struct {
		images    []string
		platforms []v1.Platform
		flags     []string
		ldflags   string
		version   string
	}
	started time.Time
	created time.Time // the epoch

	mu   sync.Mutex
	bins map[string]*binaryInfo // host path -> build info, read once
}

// newAttestor notes the release's parameters; goVersion gives the go
// command's version, which the provenance names where the binaries'
// build info does not (see toolchain).
func newAttestor(opts Options, plan *recipe.Plan, env []string, goVersion func() (string, error)) *attestor {
	if !opts.Attest.on() {
		return nil
	}
	if opts.Attest.Provenance == "" {
		opts.Attest.Provenance = attest.ProvenanceMin
	}
	if opts.Attest.Now == nil {
		opts.Attest.Now = time.Now
	}
	a := &attestor{opts: opts.Attest, goVersion: goVersion, bins: map[string]*binaryInfo{}, started: opts.Attest.Now(), created: opts.Meta.Created}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			a.goflags = v // the last one counts, as for go itself
		}
	}
	a.plan.images, a.plan.platforms = opts.Attest.Images, opts.Attest.Platforms
	if a.plan.images == nil {
		for _, im := range plan.Images {
			a.plan.images = append(a.plan.images, im.Name)
		}
	}
	if a.plan.platforms == nil {
		for _, p := range plan.Platforms {
			a.plan.platforms = append(a.plan.platforms, p.Platform)
		}
	}
	a.plan.flags, a.plan.ldflags, a.plan.version = plan.Flags, plan.Ldflags, opts.Meta.Version
	return a
}

// unitFacts are what a unit's attestations need beyond its manifest.
type unitFacts struct {
	name    string
	base    attest.Base
	os      attest.OS
	binDir  string
	entries []rootfs.Entry // every entry the unit's layers hold, placed

	baseBins    []attest.Binary // the base's Go binaries the image still holds
	baseSkipped []string        // the base's ELF executables not read
}

// attestTimes is how long a unit's SBOM and provenance took (the
// provenance's includes any wait for the go command's version).
type attestTimes struct{ sbom, provenance time.Duration }

// attestUnit writes the attestations of the platform image img.
func (a *attestor) attestUnit(img v1.Image, p v1.Platform, f unitFacts) (*product.Attestation, attestTimes, error) {
	var times attestTimes
	start := time.Now()
	at, im, bins, err := a.sbom(img, p, f)
	if err != nil {
		return nil, times, err
	}
	times.sbom = time.Since(start)
	start = time.Now()
	err = a.provenance(at, im, bins, f)
	times.provenance = time.Since(start)
	return at, times, err
}

// sbom writes the SBOM of the platform image img, which im names, and
// returns the binaries of this run that img holds.
func (a *attestor) sbom(img v1.Image, p v1.Platform, f unitFacts) (*product.Attestation, attest.Image, []attest.Binary, error) {
	d, err := img.Digest()
	if err != nil {
		return nil, attest.Image{}, nil, err
	}
	size, err := img.Size()
	if err != nil {
		return nil, attest.Image{}, nil, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, attest.Image{}, nil, err
	}
	pl := platform.Normalize(p)
	desc := v1.Descriptor{MediaType: mt, Digest: d, Size: size, Platform: &pl}
	im := attest.Image{Name: f.name, Manifest: desc}
	var bins []attest.Binary
	binDir := filepath.Clean(f.binDir) + string(filepath.Separator)
	for _, e := range f.entries {
		if e.Kind != rootfs.File || !strings.HasPrefix(filepath.Clean(e.Source), binDir) {
			continue
		}
		b, err := a.binary(e.Path, e.Source)
		if err != nil {
			return nil, attest.Image{}, nil, err
		}
		bins = append(bins, b)
	}
	doc, err := attest.SBOM(attest.SBOMSpec{Image: im, Base: f.base, Binaries: bins, OS: f.os,
		BaseBinaries: f.baseBins, BaseSkipped: f.baseSkipped, Created: a.created, ToolVersion: a.opts.HelperbuildVersion})
	if err != nil {
		return nil, attest.Image{}, nil, err
	}
	out := &product.Attestation{SPDX: doc}
	if out.SBOM, err = attest.SBOMStatement(im, doc); err != nil {
		return nil, im, nil, err
	}
	return out, im, bins, nil
}

// provenance writes out's provenance and the manifests that carry both
// statements; bins are the binaries of this run that the image holds.
func (a *attestor) provenance(out *product.Attestation, im attest.Image, bins []attest.Binary, f unitFacts) error {
	goVersion, err := a.toolchain(bins)
	if err != nil {
		return err
	}
	spec := attest.ProvenanceSpec{
		Image: im, Source: a.opts.Source, Recipe: a.opts.Recipe,
		Images: a.plan.images, Platforms: a.plan.platforms, Version: a.plan.version,
		HelperbuildVersion: a.opts.HelperbuildVersion, GoVersion: goVersion, GOFLAGS: a.goflags,
		BuildFlags: a.plan.flags, LDFlags: a.plan.ldflags, CI: a.opts.CI, Mode: a.opts.Provenance,
	}
	if f.base.Digest != (v1.Hash{}) {
		spec.Bases = []attest.Base{f.base}
	}
	if a.opts.Package != nil {
		pk := *a.opts.Package
		pk.Base = cmp.Or(f.base.Ref, "scratch")
		spec.Package = &pk
	}
	if a.opts.Provenance == attest.ProvenanceMax {
		spec.Run = attest.Run{Started: a.started, Finished: a.opts.Now()}
	}
	if out.Provenance, err = attest.Provenance(spec); err != nil {
		return err
	}
	switch a.opts.Mode {
	case product.AttestIndex:
		out.Manifest, err = attest.AttestationManifest(im.Manifest, out.SBOM, out.Provenance)
	case product.AttestReferrers:
		out.Referrers, err = referrers(im.Manifest, out)
	}
	if err != nil {
		return err
	}
	out.Digests, err = product.DigestsOf(out)
	return err
}

// toolchain is the Go release that built bins, as their build info
// records it: the toolchain go build ran, after any GOTOOLCHAIN switch
// for the binary's own module, without the experiments ("go1.26.8", as
// go env GOVERSION says it). The go command is asked only when the
// binaries record none or disagree, which no child process costs the
// runs that agree (issue 41: a start with one process fewer).
func (a *attestor) toolchain(bins []attest.Binary) (string, error) {
	var v string
	for _, b := range bins {
		var got string
		if b.Info != nil {
			got, _, _ = strings.Cut(strings.TrimSpace(b.Info.GoVersion), " ")
		}
		if !strings.HasPrefix(got, "go") || (v != "" && got != v) {
			return a.goVersion()
		}
		v = got
	}
	if v == "" {
		return a.goVersion()
	}
	return v, nil
}

// referrers are the OCI 1.1 referrers of desc: both statements and the
// plain SPDX document.
func referrers(desc v1.Descriptor, at *product.Attestation) ([]*attest.Artifact, error) {
	sbom, err := attest.StatementReferrer(desc, at.SBOM)
	if err != nil {
		return nil, err
	}
	prov, err := attest.StatementReferrer(desc, at.Provenance)
	if err != nil {
		return nil, err
	}
	spdx, err := attest.SPDXReferrer(desc, at.SPDX)
	if err != nil {
		return nil, err
	}
	return []*attest.Artifact{sbom, prov, spdx}, nil
}
