package release

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/build"
	"github.com/helperbuild/helperbuild/internal/join"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// IndexOptions configures JoinIndex (helperbuild index).
type IndexOptions struct {
	// Sources are the images to join, as the user wrote them.
	Sources []string
	// Join says how to reach and check them (platforms, FixPlatform).
	Join join.Options
	// Name is the image's name, for the report, the dotenv variables and
	// the attestations' purls.
	Name string
	// Tags are the index's tag names; the destination says where.
	Tags []string
	// Attest: Mode, HelperbuildVersion and CI are used; each platform
	// image gets a provenance naming its source by digest.
	Attest build.Attest
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// Joined is what JoinIndex made: the index as a Result, ready for any
// destination and the report, and the checked plan behind it.
type Joined struct {
	Result *product.Result
	Plan   *join.Plan
}

// JoinIndex checks every source (join.New: evidence before anything is
// written) and assembles the index that joins them: the platform images in
// the plan's order, then their attestations. With Attest index each
// platform gets one attestation manifest: the statements its source
// carried (in the source index, or as in-toto referrers), then the
// provenance helperbuild writes; otherwise the source index's attestation
// manifests are listed as they were. Every referrer of a source image is
// copied as it is (Platform.Referrers), whatever the mode. The index is
// verified as a whole (coverage and configs; each platform's binaries were
// checked by join) before it is returned. It writes nothing.
func JoinIndex(ctx context.Context, opts IndexOptions) (*Joined, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts.Join.Logger = log
	plan, err := join.New(ctx, opts.Sources, opts.Join)
	if err != nil {
		return nil, err
	}
	im := &product.Image{Name: opts.Name, Tags: opts.Tags}
	images := map[v1.Hash]v1.Image{}
	descs := make([]v1.Descriptor, 0, len(plan.Entries))
	var kept []manifest.Attachment
	carriedBy := make([]carried, len(plan.Entries))
	for i, e := range plan.Entries {
		m, err := e.Image.Manifest()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Source, err)
		}
		images[e.Descriptor.Digest] = e.Image
		descs = append(descs, e.Descriptor)
		if carriedBy[i], err = carryOver(e, opts.Attest.Mode == product.AttestIndex); err != nil {
			return nil, err
		}
		for _, a := range carriedBy[i].kept {
			kept = append(kept, manifest.Attachment{Entry: a.Descriptor, Image: a.Manifest})
		}
		im.Platforms = append(im.Platforms, product.Platform{Platform: e.Platform, Digest: e.Descriptor.Digest, Size: e.Descriptor.Size,
			CompressedSize: manifest.CompressedSize(m), Referrers: carriedBy[i].referrers, CosignTags: carriedBy[i].cosignTags})
	}
	if opts.Attest.Mode.On() {
		if err := provenances(im, plan, carriedBy, opts); err != nil {
			return nil, err
		}
	}
	for _, a := range append(kept, product.Attachments(im.Platforms)...) {
		images[a.Entry.Digest] = a.Image
		descs = append(descs, a.Entry)
	}
	idx, err := manifest.IndexOf(descs, nil, func(h v1.Hash) (v1.Image, error) {
		if img, ok := images[h]; ok {
			return img, nil
		}
		return nil, fmt.Errorf("index has no image %s", h)
	})
	if _, err := im.WithIndex(idx, err); err != nil {
		return nil, err
	}
	if err := verifyJoined(ctx, im, plan); err != nil {
		return nil, err
	}
	log.Info("index assembled", "image", im.Name, "digest", im.Digest.String(), "platforms", len(im.Platforms))
	return &Joined{Result: &product.Result{Images: []product.Image{*im}}, Plan: plan}, nil
}

// provenances gives each platform image of im a provenance naming its
// source manifest by digest, in the index or as a referrer. In the index it
// is the last statement of the platform's one attestation manifest, after
// the statements carried from the source (see carryOver).
func provenances(im *product.Image, plan *join.Plan, carriedBy []carried, opts IndexOptions) error {
	for i, e := range plan.Entries {
		st, err := attest.JoinProvenance(attest.JoinSpec{
			Image: attest.Image{Name: opts.Name, Manifest: e.Descriptor},
			Source: attest.JoinedSource{Ref: e.Source, Pinned: e.Pinned, Manifest: e.SourceManifest,
				ConfigPlatform: e.ConfigSaid},
			FixedConfig: e.Fixed, Sources: opts.Sources, Platforms: plan.Platforms(),
			HelperbuildVersion: opts.Attest.HelperbuildVersion, CI: opts.Attest.CI,
		})
		if err != nil {
			return err
		}
		at := &product.Attestation{Provenance: st}
		switch opts.Attest.Mode {
		case product.AttestIndex:
			at.Manifest, err = attest.AttestationManifest(e.Descriptor, append(slices.Clone(carriedBy[i].statements), st)...)
		case product.AttestReferrers:
			var r *attest.Artifact
			r, err = attest.StatementReferrer(e.Descriptor, st)
			at.Referrers = []*attest.Artifact{r}
		}
		if err != nil {
			return err
		}
		if at.Digests, err = product.DigestsOf(at); err != nil {
			return err
		}
		if at.Manifest != nil {
			// The metadata names the SBOM the attestation manifest carries.
			for _, s := range carriedBy[i].statements {
				if s.PredicateType == attestspec.PredicateSPDX {
					at.Digests.SBOM = s.Digest()
					break
				}
			}
		}
		im.Platforms[i].Attestation = at
	}
	return nil
}

// verifyJoined checks the joined index as verify does (every platform
// listed once, image manifests, configs that name their entries'
// platforms), taking each platform's arch check from join's evidence
// instead of reading its layers again.
func verifyJoined(ctx context.Context, im *product.Image, plan *join.Plan) error {
	byDigest := map[v1.Hash]join.Entry{}
	for _, e := range plan.Entries {
		byDigest[e.Descriptor.Digest] = e
	}
	checked := func(d v1.Hash, p v1.Platform) ([]verify.Check, bool) {
		e, ok := byDigest[d]
		if !ok {
			return nil, false
		}
		cf, err := e.Image.ConfigFile()
		if err != nil {
			return nil, false
		}
		arch := verify.Check{Name: verify.CheckArch, OK: len(e.Evidence.Mismatches()) == 0 || e.Fixed,
			Reason: fmt.Sprintf("%d executables match %s", len(e.Evidence.Binaries), platform.Format(p))}
		return []verify.Check{verify.ConfigAgrees(cf, p), arch}, true
	}
	rep, err := verify.Index(ctx, im.Index, verify.Options{Platforms: plan.Platforms(), Checked: checked})
	if err != nil {
		return fmt.Errorf("verify %s: %w", im.Name, err)
	}
	if !rep.OK() {
		return &verify.FailedError{Name: "image " + im.Name, Report: rep, Outcome: "nothing was published"}
	}
	return nil
}
