package verify

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// entry is one image of an index.
type entry struct {
	desc     v1.Descriptor
	platform v1.Platform // as listed, not normalised
}

// Index verifies a multi-arch image index. The error is only for failures to
// read it (registry, layout, corrupt blobs); everything the checks find goes
// into the report.
func Index(ctx context.Context, idx v1.ImageIndex, opts Options) (*Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	d, err := idx.Digest()
	if err != nil {
		return nil, fmt.Errorf("index digest: %w", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", d, err)
	}
	r := &Report{Digest: d.String(), Problems: []Finding{}}
	entries := platformEntries(im, &r.Problems)
	coverage := checkCoverage(entries, opts.Platforms, &r.Problems)
	listed := make([]v1.Platform, len(entries))
	for i, e := range entries {
		listed[i] = e.platform
	}
	nodeProblems, nodes := checkNodes(opts.Nodes, listed, "has no image in this index")
	r.Problems, r.Nodes = append(r.Problems, nodeProblems...), nodes

	inIndex := inIndexAttestations(im)
	r.Platforms = make([]PlatformReport, len(entries))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Jobs)
	for i, e := range entries {
		g.Go(func() error {
			checks, err := checkEntry(gctx, idx, inIndex, e, i, opts)
			if err != nil {
				return fmt.Errorf("image %s (%s): %w", e.desc.Digest, platform.Format(e.platform), err)
			}
			r.Platforms[i] = PlatformReport{
				Platform: platform.Format(e.platform),
				Digest:   e.desc.Digest.String(),
				Checks:   append(coverage[i], checks...),
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sc, err := signatureCheck(ctx, d, opts)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", d, err)
	}
	for _, c := range sc {
		if !c.OK {
			r.Problems = append(r.Problems, problem(CheckSignature, "", "index: "+c.Reason))
		}
	}
	return r, nil
}

// platformEntries are the platform images im lists; an entry no client
// can pick, or that is not an image manifest, is a coverage problem, and
// so is an index with none. Attestations and unknown/unknown entries are
// not platform images and are skipped.
func platformEntries(im *v1.IndexManifest, problems *[]Finding) []entry {
	var entries []entry
	for _, desc := range im.Manifests {
		switch {
		case attestspec.IsAttestation(desc) || attestspec.UnknownPlatform(desc):
			continue // no runtime selects it: not a platform's image
		case desc.Platform == nil:
			*problems = append(*problems, problem(CheckCoverage, "", fmt.Sprintf("entry %s has no platform: clients cannot pick it", desc.Digest)))
		case desc.MediaType != types.OCIManifestSchema1 && desc.MediaType != types.DockerManifestSchema2:
			*problems = append(*problems, problem(CheckCoverage, platform.Format(*desc.Platform),
				fmt.Sprintf("entry %s is %s, not an OCI or Docker image manifest", desc.Digest, mediaTypeName(desc.MediaType))))
		default:
			entries = append(entries, entry{desc: desc, platform: *desc.Platform})
		}
	}
	if len(entries) == 0 {
		*problems = append(*problems, problem(CheckCoverage, "", "index lists no image manifests"))
	}
	return entries
}

// checkEntry runs the per-platform checks of the index's i-th platform
// image e (or takes them from Options.Checked), then its signature check.
func checkEntry(ctx context.Context, idx v1.ImageIndex, inIndex map[v1.Hash][]v1.Hash, e entry, i int, opts Options) ([]Check, error) {
	var checks []Check
	ok := false
	if opts.Checked != nil && !opts.Attestations {
		checks, ok = opts.Checked(e.desc.Digest, e.platform)
	}
	if !ok {
		img, err := idx.Image(e.desc.Digest)
		if err != nil {
			return nil, err
		}
		var statements []statementBlob
		if opts.Attestations {
			if statements, err = attestationsFor(ctx, idx, inIndex, e.desc.Digest, opts); err != nil {
				return nil, err
			}
		}
		if checks, err = verifyImage(ctx, img, &e.platform, i, opts, statements); err != nil {
			return nil, err
		}
	}
	sc, err := signatureCheck(ctx, e.desc.Digest, opts)
	if err != nil {
		return nil, err
	}
	return append(checks, sc...), nil
}

// Platform runs the per-platform checks (config, arch, contract, run) on
// img, the image an index lists under p, without the index-level ones.
// Index takes them through Options.Checked instead of reading img again, so
// a builder can check each platform as soon as it exists. Run unpacks into
// TempDir/0: concurrent calls with Run need their own TempDir.
func Platform(ctx context.Context, img v1.Image, p v1.Platform, opts Options) ([]Check, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	opts.Attestations = false // an image alone: Index and Image check its attestations
	return verifyImage(ctx, img, &p, 0, opts, nil)
}

// Image verifies a single image, such as the per-platform tag a runner
// pulls (x86_64-v17.10.0). It passes when exactly one platform is expected
// and the config names it (an arm config without a variant is taken as
// v7, as runtimes do, with a warning); when anything else is expected, a
// single image is itself a problem: a multi-arch index was expected. The
// image is checked against the platform its config names.
func Image(ctx context.Context, img v1.Image, opts Options) (*Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("image digest: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", d, err)
	}
	p := configPlatform(cfg)
	r := &Report{Digest: d.String(), Problems: []Finding{}}
	var checks []Check
	switch {
	case len(opts.Platforms) == 0:
		r.Problems = append(r.Problems, problem(CheckCoverage, platform.Format(p), fmt.Sprintf(
			"single %s image where a multi-arch index was expected; to check it as a single-platform image, expect exactly its platform (--platforms %s)",
			platform.Format(p), platform.Format(platform.Normalize(p)))))
	case len(opts.Platforms) > 1:
		r.Problems = append(r.Problems, problem(CheckCoverage, platform.Format(p), fmt.Sprintf(
			"single %s image where a multi-arch index of %s was expected", platform.Format(p), platform.FormatList(opts.Platforms))))
	case samePlatform(p, opts.Platforms[0]):
		checks = append(checks, Check{Name: CheckCoverage, OK: true, Reason: "as expected"})
	case p.Architecture == "arm" && p.Variant == "" && platform.Equal(p, opts.Platforms[0]):
		checks = append(checks,
			Check{Name: CheckCoverage, OK: true, Reason: "as expected"},
			Check{Name: CheckCoverage, OK: true, Warning: true, Reason: "the config says linux/arm without a variant; runtimes take it as " + platform.Format(opts.Platforms[0])})
	default:
		checks = append(checks, Check{Name: CheckCoverage, Reason: "image is " + platform.Format(p) + ", expected " + platform.Format(opts.Platforms[0])})
	}
	nodeProblems, nodes := checkNodes(opts.Nodes, []v1.Platform{p}, "cannot run this "+platform.Format(p)+" image")
	r.Problems, r.Nodes = append(r.Problems, nodeProblems...), nodes
	var statements []statementBlob
	if opts.Attestations {
		if statements, err = attestationsFor(ctx, nil, nil, d, opts); err != nil {
			return nil, fmt.Errorf("image %s (%s): %w", d, platform.Format(p), err)
		}
	}
	more, err := verifyImage(ctx, img, nil, 0, opts, statements)
	if err != nil {
		return nil, fmt.Errorf("image %s (%s): %w", d, platform.Format(p), err)
	}
	sc, err := signatureCheck(ctx, d, opts)
	if err != nil {
		return nil, fmt.Errorf("image %s (%s): %w", d, platform.Format(p), err)
	}
	more = append(more, sc...)
	r.Platforms = []PlatformReport{{Platform: platform.Format(p), Digest: d.String(), Checks: append(checks, more...)}}
	return r, nil
}

func mediaTypeName(mt types.MediaType) string {
	switch {
	case mt == "":
		return "without a media type"
	case mt.IsIndex():
		return "an image index (" + string(mt) + ")"
	default:
		return string(mt)
	}
}

// checkCoverage compares the listed platforms with the expected ones. It
// returns each entry's coverage check (none when nothing is expected) and
// appends a problem for each expected platform no entry stands for.
func checkCoverage(entries []entry, expected []v1.Platform, problems *[]Finding) [][]Check {
	out := make([][]Check, len(entries))
	if expected == nil {
		return out
	}
	accounted := make([]bool, len(expected))
	seen := map[string]bool{}
	for i, e := range entries {
		name := platform.Format(e.platform)
		if e.platform.Architecture != "arm" || e.platform.Variant != "" {
			name = platform.Format(platform.Normalize(e.platform))
		}
		if seen[name] {
			out[i] = []Check{{Name: CheckCoverage, Reason: name + " is listed more than once: runtimes pull only the first"}}
			continue
		}
		seen[name] = true
		j := exactIndex(expected, e.platform)
		switch {
		case j >= 0:
			accounted[j] = true
			out[i] = []Check{{Name: CheckCoverage, OK: true, Reason: "as expected"}}
		case e.platform.Architecture == "arm" && e.platform.Variant == "" && armExpected(expected, accounted) >= 0:
			j := armExpected(expected, accounted)
			accounted[j] = true
			out[i] = []Check{{Name: CheckCoverage, Reason: "the entry has no variant; expected " + platform.Format(expected[j])}}
		default:
			out[i] = []Check{{Name: CheckCoverage, Reason: "in the index but not expected"}}
		}
	}
	for j, p := range expected {
		if !accounted[j] {
			*problems = append(*problems, problem(CheckCoverage, platform.Format(platform.Normalize(p)), "missing from the index"))
		}
	}
	return out
}

func exactIndex(expected []v1.Platform, p v1.Platform) int {
	for j, e := range expected {
		if samePlatform(e, p) {
			return j
		}
	}
	return -1
}

func armExpected(expected []v1.Platform, accounted []bool) int {
	for j, e := range expected {
		if e.Architecture == "arm" && !accounted[j] {
			return j
		}
	}
	return -1
}
