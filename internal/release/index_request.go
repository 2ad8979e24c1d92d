package release

import (
	"context"
	"fmt"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/build"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/join"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/publish"
)

// IndexRequest is an index run (helperbuild index) as the command gathered
// it: images that already exist, joined into one index at Tags.
type IndexRequest struct {
	// Command names the run on the start line ("helperbuild index").
	Command string
	// Sources are the images, as the user wrote them; GitLabHelper and
	// Version add GitLab Runner's per-arch helper tags of one version.
	Sources               []string
	GitLabHelper, Version string
	// GitLabWindowsBase is the variant of GitLab's Windows helper tags
	// (servercore, the default, or nanoserver) for the Windows platforms
	// of Platforms.
	GitLabWindowsBase string
	// Platforms is --platforms, the index's list in its order (nil: every
	// platform of the sources); AllPlatforms is --platforms all, refused.
	Platforms    []v1.Platform
	AllPlatforms bool
	// FixPlatform publishes a lying config corrected; DryRun writes nothing.
	FixPlatform, DryRun bool
	// Jobs bounds the sources checked at once.
	Jobs int
	// Tags are the --tag references, REGISTRY/REPOSITORY[:TAG].
	Tags []string
	// Attest is --attest: index, referrers or none.
	Attest             string
	CI                 CI
	HelperbuildVersion string
	Registry           Registry
	Outputs            Outputs
	// Sign signs the index and every platform manifest before any tag
	// moves (index --sign); nil signs nothing.
	Sign *SignRequest
}

// IndexSource is where one platform of a joined index came from, for the
// report.
type IndexSource struct {
	Platform, ConfigSaid v1.Platform
	Source               string
	SourceManifest       v1.Hash
	// Fixed: the config was replaced; Manifest is the new manifest.
	Fixed    bool
	Manifest v1.Hash
	Binaries int
	// Dropped counts the source's attestations left behind (Fixed).
	Dropped int
	// Base is, for a Windows entry, the base whose config's os.version
	// (BaseOSVersion) was compared with the source's; BaseUnseen says why
	// none was when Base is "".
	Base, BaseOSVersion, BaseUnseen string
	// Attestations, Referrers and CosignTags count what came along: the
	// source index's attestation manifests about the image, its referrers,
	// its cosign tags.
	Attestations, Referrers, CosignTags int
}

// PreparedIndex is an IndexRequest checked, before any registry is read.
type PreparedIndex struct {
	IndexRequest
	opts   IndexOptions
	placed publish.Placed
	refs   []string
	// signing and signer sign the index (Sign); signer keeps the bundles.
	signing publish.Signing
	signer  *Signer
}

// PrepareIndex checks req: flags, targets, output files.
func PrepareIndex(req IndexRequest) (*PreparedIndex, error) {
	if len(req.Tags) == 0 {
		return nil, inputf("index needs --tag TARGET[:TAG], where the index goes (repeatable)")
	}
	if err := checkInsecure(req.Registry.Insecure); err != nil {
		return nil, err
	}
	if err := req.Registry.Check(); err != nil {
		return nil, err
	}
	if req.Jobs < 1 {
		return nil, inputf("--jobs must be at least 1, got %d", req.Jobs)
	}
	if req.AllPlatforms {
		return nil, inputf("index --platforms all: list the platforms in the index's order, or drop --platforms for every platform of the sources")
	}
	mode, err := product.ParseAttestMode(req.Attest)
	if err != nil {
		return nil, &InputError{err}
	}
	sources, name, err := indexSources(req)
	if err != nil {
		return nil, err
	}
	pi := &PreparedIndex{IndexRequest: req, placed: publish.Placed{}}
	placements, err := indexPlacements(req.Tags, req.Registry.Insecure)
	if err != nil {
		return nil, err
	}
	pi.refs = make([]string, len(placements))
	var tags []string
	for i, pl := range placements {
		pi.refs[i] = pl.Repository.String()
		tags = append(tags, pl.Tags...)
	}
	if name == "" {
		name = path.Base(placements[0].Repository.RepositoryStr())
	}
	pi.placed[name] = placements
	if err := checkOutputFile("--metadata-file", req.Outputs.Metadata); err != nil {
		return nil, err
	}
	ci := req.CI
	pi.opts = IndexOptions{Sources: sources, Name: name, Tags: tags,
		Join:   join.Options{Platforms: req.Platforms, FixPlatform: req.FixPlatform, Jobs: req.Jobs},
		Attest: build.Attest{Mode: mode, HelperbuildVersion: req.HelperbuildVersion, CI: ci.attest()},
	}
	if pi.signing, pi.signer, err = req.Sign.signing(req.Registry); err != nil {
		return nil, err
	}
	if err := checkDotenvFile(req.Outputs.Dotenv, []dotenvImage{{name: name, tagged: true, signer: pi.signer.who()}}); err != nil {
		return nil, err
	}
	return pi, nil
}

// indexSources are the sources and --gitlab-helper's tags; the image's
// name is gitlab-runner-helper with --gitlab-helper, else "" (the
// target's).
func indexSources(req IndexRequest) ([]string, string, error) {
	sources := append([]string(nil), req.Sources...)
	name := ""
	switch {
	case req.GitLabHelper != "":
		tags, err := join.GitLabHelper(req.GitLabHelper, req.Version, req.Platforms, req.GitLabWindowsBase, req.Registry.Insecure)
		if err != nil {
			return nil, "", &InputError{err}
		}
		sources, name = append(sources, tags...), "gitlab-runner-helper"
	case req.GitLabWindowsBase != "":
		return nil, "", inputf("--gitlab-windows-base %s belongs to --gitlab-helper REPO; name the sources instead", req.GitLabWindowsBase)
	case req.Version != "":
		return nil, "", inputf("--version %s belongs to --gitlab-helper REPO; name the sources instead", req.Version)
	}
	if len(sources) == 0 {
		return nil, "", inputf("index needs its sources: helperbuild index --tag TARGET SOURCE... (or --gitlab-helper REPO --version V)")
	}
	return sources, name, nil
}

// indexPlacements groups the --tag references by repository, in order; a
// reference without a tag means latest.
func indexPlacements(tags, insecure []string) ([]publish.Placement, error) {
	var out []publish.Placement
	for _, t := range tags {
		ref := t
		if _, err := imageref.ParseRepository(t, insecure); err == nil {
			ref = t + ":latest"
		}
		tag, err := imageref.ParseTag(ref, insecure)
		if err != nil {
			return nil, inputf("--tag %q: %v", t, err)
		}
		i := 0
		for i < len(out) && out[i].Repository.String() != tag.Repository.String() {
			i++
		}
		if i == len(out) {
			out = append(out, publish.Placement{Repository: tag.Repository})
		}
		out[i].Tags = append(out[i].Tags, tag.TagStr())
	}
	return out, nil
}

// Execute checks that every target takes a push (unless DryRun), checks
// every source against its binaries, assembles the index and publishes it
// with push's registry destination (tags last), then writes the output
// files. With DryRun the report holds the index that would be written,
// and nothing is.
func (pi *PreparedIndex) Execute(ctx context.Context, obs Observer) (*Report, error) {
	obs = obs.defaults()
	s, err := openSession(pi.Registry, "index", "", obs.Logger, obs.RetryLogger)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	opts := pi.opts
	opts.Join.TempDir, opts.Join.Images, opts.Logger = s.tmp, s.images, obs.Logger
	ps := opts.Join.Platforms
	if ps == nil && pi.GitLabHelper != "" && len(opts.Sources) == len(join.GitLabHelperPlatforms()) {
		ps = join.GitLabHelperPlatforms()
	}
	obs.Progress.Event(progress.Event{Kind: progress.KindStart, Message: pi.Command, Destination: strings.Join(pi.refs, ", "),
		Images: []string{opts.Name}, Platforms: platform.FormatAll(ps), AllPlatforms: "every platform of the sources"})
	dest, err := s.registryDestination(pi.placed, []string{opts.Name}, pi.signing)
	if err != nil {
		return nil, err
	}
	if !pi.DryRun {
		if err := dest.Hooks(ctx).Preflight(ctx); err != nil {
			return nil, err
		}
	}
	obs.phase(progress.KindPhaseStart, "check", fmt.Sprintf("check: %d sources, each config against its binaries", len(opts.Sources)))
	joined, err := JoinIndex(ctx, opts)
	if err != nil {
		return nil, err
	}
	obs.phase(progress.KindPhaseEnd, "check", fmt.Sprintf("checked: %d platforms", len(joined.Plan.Entries)))
	t := tail{Observer: obs, dest: dest, where: InRegistry, header: "publish: blobs, manifests by digest, checked, then tags", outputs: pi.Outputs, signer: pi.signer}
	var rep *Report
	if pi.DryRun {
		rep = newReport(joined.Result, t)
		if rep.DryRunIndex, err = joined.Result.Images[0].Index.RawManifest(); err != nil {
			return nil, err
		}
	} else if rep, err = finish(ctx, t, joined.Result); rep == nil {
		return nil, err
	}
	rep.Sources = indexReportSources(joined.Plan)
	return rep, err
}

// indexReportSources is the report's view of the plan.
func indexReportSources(plan *join.Plan) []IndexSource {
	out := make([]IndexSource, len(plan.Entries))
	for i, e := range plan.Entries {
		out[i] = IndexSource{Platform: e.Platform, ConfigSaid: e.ConfigSaid, Source: e.Source, SourceManifest: e.SourceManifest,
			Fixed: e.Fixed, Manifest: e.Descriptor.Digest, Binaries: len(e.Evidence.Binaries), Dropped: e.Dropped,
			Attestations: len(e.Attestations), Referrers: len(e.Referrers), CosignTags: len(e.Tagged),
			Base: e.Base, BaseOSVersion: e.BaseOSVersion, BaseUnseen: e.BaseUnseen}
	}
	return out
}
