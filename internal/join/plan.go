package join

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// Options configures Plan.
type Options struct {
	// Images says how to reach the sources; set its Blobs so that each
	// layer is fetched once, for the evidence and again for the copy.
	Images imageref.Options
	// Platforms are the index's platforms, in its order; every one must
	// come from exactly one source, and an index source contributes only
	// these. Nil: every platform the sources offer, in a fixed order.
	Platforms []v1.Platform
	// FixPlatform replaces a config that disagrees with its binaries by
	// one that names their platform, instead of refusing the source.
	FixPlatform bool
	// TempDir is where ELF files are spooled one at a time; "" is
	// os.TempDir.
	TempDir string
	// Jobs bounds how many images are read at once; 0 means 2.
	Jobs int
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// Entry is one platform image of the index to be written.
type Entry struct {
	// Source is the source as the user wrote it, Pinned the same pinned by
	// the digest it resolved to.
	Source, Pinned string
	// SourceManifest is the platform manifest's digest in the source.
	SourceManifest v1.Hash
	// Platform is the index entry's platform: the config's, or the
	// binaries' when Fixed.
	Platform v1.Platform
	// ConfigSaid is the platform the source's config names.
	ConfigSaid v1.Platform
	// Base is, for a Windows image, the base its annotations name, pinned
	// by digest, whose config's os.version was compared with the image's;
	// "" when it names none. BaseOSVersion is the base's config's
	// os.version; BaseUnseen says why no base was compared.
	Base, BaseOSVersion, BaseUnseen string
	// Fixed says the config was replaced (FixPlatform): Image has a new
	// config and manifest digest, the same layers.
	Fixed bool
	// Image is what goes into the index.
	Image v1.Image
	// Descriptor is Image's index entry.
	Descriptor v1.Descriptor
	Evidence   Evidence
	// Attestations came with the image from a source index: attestation
	// manifests it listed about the image. Referrers are what the source's
	// registry keeps about the image's manifest as OCI 1.1 referrers
	// (attestations, SBOM documents, signatures), sorted by digest, to be
	// copied as they are (those among Attestations not again). Dropped counts both left behind because the
	// image was fixed: they are about the source's manifest, which the
	// index does not hold.
	Attestations []Attached
	Referrers    []Attached
	// Tagged are cosign's tags about the image in the source's repository
	// (sha256-<hex>.sig, .att), to be copied beside it. Dropped counts them
	// too.
	Tagged  []Tagged
	Dropped int
}

// Plan is the checked list of the index's platform images, in index order.
type Plan struct {
	Entries []Entry
}

// Platforms lists the entries' platforms in order.
func (p *Plan) Platforms() []v1.Platform {
	out := make([]v1.Platform, len(p.Entries))
	for i, e := range p.Entries {
		out[i] = e.Platform
	}
	return out
}

// New resolves every source, reads each platform image's evidence and
// checks the whole: it fails, naming the source, on the first source that
// cannot be read, a config that disagrees with its binaries (unless
// FixPlatform), a platform given twice or asked for and not given. It
// writes nothing but temporary files.
func New(ctx context.Context, sources []string, opts Options) (*Plan, error) {
	if len(sources) == 0 {
		return nil, errors.New("no source image")
	}
	want := make([]v1.Platform, len(opts.Platforms))
	for i, p := range opts.Platforms {
		want[i] = platform.Normalize(p)
	}
	var cands []candidate
	for _, s := range sources {
		cs, err := resolve(ctx, s, want, opts.Images)
		if err != nil {
			return nil, err
		}
		cands = append(cands, cs...)
	}
	entries := make([]Entry, len(cands))
	g, gctx := errgroup.WithContext(ctx)
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = 2
	}
	g.SetLimit(jobs)
	for i, c := range cands {
		g.Go(func() error {
			e, err := check(gctx, ctx, c, opts)
			entries[i] = e
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	entries, err := arrange(entries, want)
	if err != nil {
		return nil, err
	}
	if opts.Logger != nil {
		for _, e := range entries {
			opts.Logger.Info("source checked", "platform", platform.Format(e.Platform), "source", e.Pinned,
				"binaries", len(e.Evidence.Binaries), "fixed", e.Fixed, "attestations", len(e.Attestations), "referrers", len(e.Referrers))
			if e.Dropped > 0 {
				opts.Logger.Warn("attestations and referrers of a fixed image left behind: they are about the source's manifest, which the index does not hold",
					"platform", platform.Format(e.Platform), "source", e.Pinned, "left", e.Dropped)
			}
		}
	}
	return &Plan{Entries: entries}, nil
}

// check reads c's config, referrers and evidence and makes its entry: as
// it is when the binaries fit the config, with a corrected config under
// FixPlatform, else a refusal that names the source. keep outlives ctx: the
// referrers' blobs are read within it, when they are copied.
func check(ctx, keep context.Context, c candidate, opts Options) (Entry, error) {
	e := Entry{Source: c.source, Pinned: c.pinned, SourceManifest: c.digest, Image: c.image, Attestations: c.attached}
	what := "source " + c.source
	if c.listed != nil {
		what += " (" + platform.Format(*c.listed) + ")"
	}
	cf, err := c.image.ConfigFile()
	if err != nil {
		return e, fmt.Errorf("%s: config: %w", what, registry.Explain(err))
	}
	e.ConfigSaid = platform.Normalize(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant, OSVersion: cf.OSVersion})
	if e.ConfigSaid.OS == "" || e.ConfigSaid.Architecture == "" {
		return e, fmt.Errorf("%s: its config names no platform (os %q, architecture %q)", what, cf.OS, cf.Architecture)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if e.Referrers, err = referrers(ctx, keep, c, opts.Images, log); err != nil {
		return e, fmt.Errorf("%s: %w", what, err)
	}
	if e.Tagged, err = cosignTags(keep, c, opts.Images); err != nil {
		return e, fmt.Errorf("%s: %w", what, err)
	}
	// An attestation manifest of the source index that names a subject is
	// a referrer too: it goes along once, with the index.
	e.Referrers = slices.DeleteFunc(e.Referrers, func(r Attached) bool {
		return slices.ContainsFunc(e.Attestations, func(a Attached) bool { return a.Descriptor.Digest == r.Descriptor.Digest })
	})
	e.Evidence, err = readEvidence(ctx, c.image, e.ConfigSaid, opts.TempDir)
	if err != nil {
		return e, fmt.Errorf("%s: reading its layers: %w", what, registry.Explain(err))
	}
	e.Platform = e.ConfigSaid
	bad := e.Evidence.Mismatches()
	fits := len(e.Evidence.Binaries) > 0 && len(bad) == 0
	truth := e.ConfigSaid
	if !fits {
		got, gerr := binariesPlatform(e.Evidence)
		if gerr != nil {
			return e, fmt.Errorf("%s: config says %s, binaries do not say one platform: %v", what, platform.Format(e.ConfigSaid), gerr)
		}
		truth = got
	}
	if platform.IsWindows(truth) {
		if truth, err = windowsTruth(ctx, &e, cf, truth, what, opts, log); err != nil {
			return e, err
		}
	}
	if fits && platform.Equal(truth, e.ConfigSaid) {
		if c.listed != nil && !listedAs(*c.listed, e.ConfigSaid) {
			return e, fmt.Errorf("%s: the index lists it as %s, its config and binaries say %s", what, platform.Format(*c.listed), platform.Format(e.ConfigSaid))
		}
		return e, e.describe()
	}
	if !opts.FixPlatform {
		if fits {
			return e, fmt.Errorf("%s: config says %s, its base %s is %s (os.version of the base's config); --fix-platform publishes it with a config that says %s",
				what, platform.Format(e.ConfigSaid), e.Base, truth.OSVersion, platform.Format(truth))
		}
		return e, fmt.Errorf("%s: config says %s, binaries are %s (%s; %d of %d executables); --fix-platform publishes it with a config that says %s",
			what, platform.Format(e.ConfigSaid), platform.Format(truth), bad[0].Mismatch, len(bad), len(e.Evidence.Binaries), platform.Format(truth))
	}
	if platform.IsWindows(truth) && truth.OSVersion == "" {
		return e, fmt.Errorf("%s: config says %s, binaries are %s; --fix-platform cannot name its os.version: %s", what, platform.Format(e.ConfigSaid), platform.Format(truth), e.BaseUnseen)
	}
	if err := e.fix(truth); err != nil {
		return e, fmt.Errorf("%s: %w", what, err)
	}
	return e, e.describe()
}

// windowsTruth completes truth, the Windows platform the binaries (or the
// config they agree with) say, with its os.version: the base's when the
// source names a base that can be read (windowsBase), else the config's.
// A Windows image whose build nothing names is refused: no Windows node
// could pick it.
func windowsTruth(ctx context.Context, e *Entry, cf *v1.ConfigFile, truth v1.Platform, what string, opts Options, log *slog.Logger) (v1.Platform, error) {
	b, err := windowsBase(ctx, e.Image, cf, truth, opts.Images)
	if err != nil {
		return truth, fmt.Errorf("%s: %w", what, err)
	}
	e.Base, e.BaseOSVersion = b.Ref, b.OSVersion
	truth.OSVersion = ""
	if platform.IsWindows(e.ConfigSaid) {
		truth.OSVersion = e.ConfigSaid.OSVersion
	}
	switch {
	case b.Unseen != "":
		log.Info("os.version not checked against a base", "source", e.Pinned, "why", b.Unseen)
	case b.OSVersion == "":
		return truth, fmt.Errorf("%s: its base %s names no os.version: not a Windows base a node could pick by build", what, b.Ref)
	case truth.OSVersion == "" || !sameBuild(truth.OSVersion, b.OSVersion):
		truth.OSVersion = b.OSVersion
	}
	if truth.OSVersion == "" && platform.IsWindows(e.ConfigSaid) {
		return truth, fmt.Errorf("%s: config says %s with no os.version and %s: a Windows node picks its entry by os.version; publish it with one (its base's build)",
			what, platform.Format(e.ConfigSaid), b.Unseen)
	}
	e.BaseUnseen = b.Unseen
	return truth, nil
}

// describe fills in e's index entry from its image.
func (e *Entry) describe() error {
	d, err := imageref.Describe(e.Image)
	if err != nil {
		return err
	}
	p := e.Platform
	d.Platform = &p
	e.Descriptor = d
	return nil
}

// arrange orders entries by want (else the fixed order), Linux first and
// Windows by build (platform.Ordered), and refuses a platform given twice,
// or asked for and given by no source. An asked Windows build is served by
// an entry of any of its revisions (platform.Satisfies).
func arrange(entries []Entry, want []v1.Platform) ([]Entry, error) {
	order := want
	if len(order) == 0 {
		order = fixedOrder(entries)
	}
	order = platform.Ordered(order)
	out := make([]Entry, 0, len(order))
	used := map[int]v1.Platform{}
	for _, p := range order {
		var found []int
		for i, e := range entries {
			if platform.Satisfies(e.Platform, p) {
				found = append(found, i)
			}
		}
		switch {
		case len(found) == 0:
			return nil, fmt.Errorf("no source offers %s (asked for %s); add a source for it or leave it out of --platforms", platform.Format(p), platform.FormatList(want))
		case len(found) > 1 && platform.IsWindows(p) && p.OSVersion == "":
			return nil, fmt.Errorf("%s matches %d Windows builds (%s is %s, %s is %s): name each build, e.g. --platforms %s",
				platform.Format(p), len(found), entries[found[0]].Source, platform.Format(entries[found[0]].Platform),
				entries[found[1]].Source, platform.Format(entries[found[1]].Platform), windowsBuilds(entries, found))
		case len(found) > 1:
			a, b := entries[found[0]], entries[found[1]]
			return nil, fmt.Errorf("%s comes from %d sources: %s (%s) and %s (%s); give one source per platform",
				platform.Format(p), len(found), a.Source, a.SourceManifest, b.Source, b.SourceManifest)
		}
		if q, ok := used[found[0]]; ok {
			return nil, fmt.Errorf("--platforms %s and %s both name %s (%s): name each platform once", platform.Format(q), platform.Format(p), entries[found[0]].Source, platform.Format(entries[found[0]].Platform))
		}
		used[found[0]] = p
		out = append(out, entries[found[0]])
	}
	for _, e := range entries {
		if platform.IndexSatisfied(order, e.Platform) < 0 {
			return nil, fmt.Errorf("source %s is %s, which is not among --platforms %s", e.Source, platform.Format(e.Platform), platform.FormatList(want))
		}
	}
	return out, nil
}

// windowsBuilds lists the builds of the entries at found as a --platforms
// value.
func windowsBuilds(entries []Entry, found []int) string {
	var ps []v1.Platform
	for _, i := range found {
		p := entries[i].Platform
		if b, ok := platform.OSBuild(p.OSVersion); ok {
			p.OSVersion = b
		}
		ps = append(ps, p)
	}
	return platform.FormatList(platform.Ordered(ps))
}

// fixedOrder is the order of the entries' platforms without --platforms:
// GitLab's helper architectures first, in its order, then the rest sorted.
func fixedOrder(entries []Entry) []v1.Platform {
	var ps []v1.Platform
	for _, e := range entries {
		if platform.Index(ps, e.Platform) < 0 {
			ps = append(ps, e.Platform)
		}
	}
	rank := func(p v1.Platform) int {
		if i := platform.Index(gitlabOrder(), p); i >= 0 {
			return i
		}
		return len(gitlabOrder())
	}
	slices.SortStableFunc(ps, func(a, b v1.Platform) int {
		if r := rank(a) - rank(b); r != 0 {
			return r
		}
		return strings.Compare(platform.Format(a), platform.Format(b))
	})
	return ps
}
