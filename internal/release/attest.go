package release

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// AttestMode says where a release puts each platform image's SBOM and
// provenance.
type AttestMode string

const (
	// AttestNone writes no attestation (the zero value).
	AttestNone AttestMode = "none"
	// AttestIndex lists one attestation manifest per platform image in the
	// image index, after all platform images, as BuildKit does.
	AttestIndex AttestMode = "index"
	// AttestReferrers makes each statement (and the SBOM as a plain SPDX
	// document) an OCI 1.1 referrer of its platform manifest; the index
	// lists the platform images only.
	AttestReferrers AttestMode = "referrers"
)

// ParseAttestMode parses --attest.
func ParseAttestMode(s string) (AttestMode, error) {
	switch m := AttestMode(s); m {
	case AttestNone, AttestIndex, AttestReferrers:
		return m, nil
	}
	return "", fmt.Errorf("--attest %q: want index, referrers or none", s)
}

// Attest configures the attestations of a release; the command gathers
// every value. Zero Mode writes none.
type Attest struct {
	Mode       AttestMode
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
}

func (a Attest) on() bool { return a.Mode == AttestIndex || a.Mode == AttestReferrers }

// Attestation is what a release says about one platform image. A merge
// (which reads the attestation manifests the jobs pushed) fills Digests
// alone.
type Attestation struct {
	// Digests name the statements and the manifests that carry them.
	Digests AttestationDigests
	// SBOM and Provenance are the in-toto statements; SPDX the SBOM's
	// document alone.
	SBOM, Provenance attest.Statement
	SPDX             []byte
	// Manifest is the attestation manifest the index lists (AttestIndex).
	Manifest *attest.Artifact
	// Referrers are the artifacts whose subject is the platform manifest
	// (AttestReferrers): the SBOM statement, the provenance statement, the
	// plain SPDX document.
	Referrers []*attest.Artifact
}

// AttestationDigests name a platform's attestations: the SBOM and
// provenance statements (the layers that hold them), and the attestation
// manifest in the index or the referrers.
type AttestationDigests struct {
	SBOM, Provenance v1.Hash
	Manifest         v1.Hash   // AttestIndex
	Referrers        []v1.Hash // AttestReferrers
}

// digestsOf names at's statements and manifests.
func digestsOf(at *Attestation) (AttestationDigests, error) {
	var d AttestationDigests
	if len(at.SBOM.JSON) > 0 { // a join writes no SBOM
		d.SBOM = at.SBOM.Digest()
	}
	if len(at.Provenance.JSON) > 0 {
		d.Provenance = at.Provenance.Digest()
	}
	if at.Manifest != nil {
		h, err := at.Manifest.Digest()
		if err != nil {
			return d, err
		}
		d.Manifest = h
	}
	for _, r := range at.Referrers {
		h, err := r.Digest()
		if err != nil {
			return d, err
		}
		d.Referrers = append(d.Referrers, h)
	}
	return d, nil
}

// mergedAttestation names the statements of an attestation manifest a
// job pushed (BuildKit's layout: one layer per statement, annotated with
// its predicate type).
func mergedAttestation(digest v1.Hash, m *v1.Manifest) *Attestation {
	at := &Attestation{Digests: AttestationDigests{Manifest: digest}}
	for _, l := range m.Layers {
		switch l.Annotations[attestspec.AnnotationPredicateType] {
		case attestspec.PredicateSPDX:
			at.Digests.SBOM = l.Digest
		case attestspec.PredicateSLSA:
			at.Digests.Provenance = l.Digest
		}
	}
	return at
}

// attestor writes each platform image's attestations; nil when the
// release writes none.
type attestor struct {
	opts Attest
	// goVersion is the go command's GOVERSION, asked for beside the
	// compiles (see newAttestor).
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
// command's version (the toolchain the provenance names), asked for
// once, beside the resolve phase and the compiles (see goVersion), so
// only the first provenance may wait for it.
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
func (a *attestor) attestUnit(img v1.Image, p v1.Platform, f unitFacts) (*Attestation, attestTimes, error) {
	var times attestTimes
	start := time.Now()
	at, im, err := a.sbom(img, p, f)
	if err != nil {
		return nil, times, err
	}
	times.sbom = time.Since(start)
	start = time.Now()
	err = a.provenance(at, im, f)
	times.provenance = time.Since(start)
	return at, times, err
}

// sbom writes the SBOM of the platform image img, which im names.
func (a *attestor) sbom(img v1.Image, p v1.Platform, f unitFacts) (*Attestation, attest.Image, error) {
	d, err := img.Digest()
	if err != nil {
		return nil, attest.Image{}, err
	}
	size, err := img.Size()
	if err != nil {
		return nil, attest.Image{}, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, attest.Image{}, err
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
			return nil, attest.Image{}, err
		}
		bins = append(bins, b)
	}
	doc, err := attest.SBOM(attest.SBOMSpec{Image: im, Base: f.base, Binaries: bins, OS: f.os,
		BaseBinaries: f.baseBins, BaseSkipped: f.baseSkipped, Created: a.created, ToolVersion: a.opts.HelperbuildVersion})
	if err != nil {
		return nil, attest.Image{}, err
	}
	out := &Attestation{SPDX: doc}
	if out.SBOM, err = attest.SBOMStatement(im, doc); err != nil {
		return nil, im, err
	}
	return out, im, nil
}

// provenance writes out's provenance and the manifests that carry both
// statements.
func (a *attestor) provenance(out *Attestation, im attest.Image, f unitFacts) error {
	goVersion, err := a.goVersion()
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
	case AttestIndex:
		out.Manifest, err = attest.AttestationManifest(im.Manifest, out.SBOM, out.Provenance)
	case AttestReferrers:
		out.Referrers, err = referrers(im.Manifest, out)
	}
	if err != nil {
		return err
	}
	out.Digests, err = digestsOf(out)
	return err
}

// referrers are the OCI 1.1 referrers of desc: both statements and the
// plain SPDX document.
func referrers(desc v1.Descriptor, at *Attestation) ([]*attest.Artifact, error) {
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

// attachments are the index's attestation entries: one per platform with
// an attestation manifest, in platform order.
func attachments(platforms []Platform) []manifest.Attachment {
	var out []manifest.Attachment
	for _, p := range platforms {
		if p.Attestation != nil && p.Attestation.Manifest != nil {
			out = append(out, manifest.Attachment{Entry: p.Attestation.Manifest.IndexEntry(), Image: p.Attestation.Manifest})
		}
	}
	return out
}
