package release

import (
	"context"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/merge"
	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// PartPaths expands merge's arguments into MergeRequest.Parts (see
// merge.PartPaths); an argument that gives no file is an *InputError.
func PartPaths(args []string) ([]string, error) {
	paths, err := merge.PartPaths(args)
	if err != nil {
		return nil, &InputError{err}
	}
	return paths, nil
}

// MergeRequest is a merge run as the command gathered it: the part files
// of a release whose platforms separate jobs pushed by digest.
type MergeRequest struct {
	// Command names the run on the start line ("helperbuild merge").
	Command string
	// Parts are the part files, each once, in order.
	Parts []string
	// Platforms is --platforms, the release's list in index order (nil:
	// the parts'); AllPlatforms is --platforms all, which merge refuses.
	Platforms    []v1.Platform
	AllPlatforms bool
	// Config is --config: every part must come from this recipe.
	Config string
	// Repo is --repo: publish under PREFIX/<image name>.
	Repo string
	// NoLatest is --no-latest: write every tag the parts name but latest.
	NoLatest bool
	Registry Registry
	// Outputs are the metadata and dotenv files (merge writes no
	// attestation files: it has digests only).
	Outputs Outputs
	// Sign signs every index and platform manifest before any tag moves
	// (merge --sign); nil signs nothing.
	Sign *SignRequest
}

// PreparedMerge is a MergeRequest checked, its parts read.
type PreparedMerge struct {
	MergeRequest
	opts    merge.Options
	parts   []*part.File
	signing publish.Signing
	signer  *Signer
}

// PrepareMerge checks req and reads its parts, before anything is read
// from a registry.
func PrepareMerge(req MergeRequest) (*PreparedMerge, error) {
	opts := merge.Options{Repo: req.Repo, NoLatest: req.NoLatest, ConfigAgrees: configAgrees}
	if err := checkInsecure(req.Registry.Insecure); err != nil {
		return nil, err
	}
	if err := req.Registry.Check(); err != nil {
		return nil, err
	}
	if req.AllPlatforms {
		return nil, inputf("merge --platforms all: merge releases the platforms the parts were built for; list them in the index's order, or drop --platforms for the recipe's")
	}
	opts.Platforms = req.Platforms
	if req.Repo != "" {
		if _, err := imageref.ParseRepository(req.Repo+"/x", req.Registry.Insecure); err != nil {
			return nil, inputf("--repo %q: %v", req.Repo, err)
		}
	}
	if req.Config != "" {
		var err error
		if opts.Recipe, err = part.RecipeAt(req.Config); err != nil {
			return nil, inputf("--config %s: %v", req.Config, outfile.Reason(err))
		}
	}
	if err := checkOutputFile("--metadata-file", req.Outputs.Metadata); err != nil {
		return nil, err
	}
	pm := &PreparedMerge{MergeRequest: req, opts: opts, parts: make([]*part.File, len(req.Parts))}
	var err error
	if pm.signing, pm.signer, err = req.Sign.signing(req.Registry); err != nil {
		return nil, err
	}
	for i, p := range req.Parts {
		if pm.parts[i], err = part.Read(p); err != nil {
			return nil, err
		}
	}
	return pm, nil
}

// Execute plans the merge of the parts, checks them in the registry and
// publishes the indexes with push's registry destination (tags last), then
// writes the output files, reporting to obs.
func (pm *PreparedMerge) Execute(ctx context.Context, obs Observer) (*Report, error) {
	obs = obs.defaults()
	s, err := openSession(pm.Registry, "merge", "", obs.Logger, obs.RetryLogger)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	opts := pm.opts
	opts.Images, opts.Logger = s.images, obs.Logger
	m, err := merge.New(pm.parts, opts)
	if err != nil {
		return nil, err
	}
	placed := placedOf(m)
	var refs []string
	for _, n := range m.Names() {
		for _, pl := range placed[n] {
			refs = append(refs, pl.Repository.String())
		}
	}
	obs.Progress.Event(progress.Event{Kind: progress.KindStart, Message: pm.Command, Destination: strings.Join(refs, ", "),
		Images: m.Names(), Platforms: platform.FormatAll(m.Platforms())})
	if err := checkDotenvFile(pm.Outputs.Dotenv, mergeDotenv(m.Names(), placed, pm.signer)); err != nil {
		return nil, err
	}
	dest, err := s.registryDestination(placed, m.Names(), pm.signing)
	if err != nil {
		return nil, err
	}
	if err := dest.Hooks(ctx).Preflight(ctx); err != nil {
		return nil, err
	}
	obs.phase(progress.KindPhaseStart, "check", fmt.Sprintf("check: %d parts, each manifest and config in the registry", len(pm.parts)))
	checked, err := m.Run(ctx)
	if err != nil {
		return nil, err
	}
	res, err := mergedResult(checked)
	if err != nil {
		return nil, err
	}
	obs.phase(progress.KindPhaseEnd, "check", outcome(res, false))
	return finish(ctx, tail{Observer: obs, dest: dest, where: InRegistry,
		header: "publish: manifests by digest, checked, then tags", outputs: pm.Outputs, signer: pm.signer}, res)
}

// configAgrees is verify's config check, as merge takes it.
func configAgrees(cf *v1.ConfigFile, p v1.Platform) (bool, string) {
	c := verify.ConfigAgrees(cf, p)
	return c.OK, c.Reason
}

// placedOf is m's placements as publish takes them.
func placedOf(m *merge.Plan) publish.Placed {
	out := publish.Placed{}
	for n, pls := range m.Placements() {
		for _, pl := range pls {
			out[n] = append(out[n], publish.Placement(pl))
		}
	}
	return out
}

// mergedResult assembles the indexes merge checked, each the index a
// single push of its platforms writes (manifest.IndexOf), into the Result
// the one finish publishes and reports.
func mergedResult(checked *merge.Result) (*product.Result, error) {
	res := &product.Result{}
	for _, mi := range checked.Images {
		out := &product.Image{Name: mi.Name, Contract: mi.Contract, BaseName: mi.BaseName, Tags: mi.Tags}
		for _, p := range mi.Platforms {
			pl := product.Platform{Platform: p.Platform, Digest: p.Descriptor.Digest, Size: p.Descriptor.Size,
				CompressedSize: manifest.CompressedSize(p.Manifest), Tags: p.Tags}
			if p.Attestation != nil {
				pl.Attestation = mergedAttestation(p.Attestation.Digest, p.Attestation.Manifest)
			}
			out.Platforms = append(out.Platforms, pl)
		}
		descs := make([]v1.Descriptor, len(mi.Entries))
		images := map[v1.Hash]v1.Image{}
		for i, e := range mi.Entries {
			descs[i], images[e.Descriptor.Digest] = e.Descriptor, e.Image
		}
		_, err := out.WithIndex(manifest.IndexOf(descs, mi.Annotations, func(h v1.Hash) (v1.Image, error) {
			if img, ok := images[h]; ok {
				return img, nil
			}
			return nil, fmt.Errorf("index has no image %s", h)
		}))
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", mi.Name, err)
		}
		res.Images = append(res.Images, *out)
	}
	return res, nil
}

// mergeDotenv are the images as the dotenv file names them, in order,
// signed by s (nil: unsigned).
func mergeDotenv(names []string, placed publish.Placed, s *Signer) []dotenvImage {
	var images []dotenvImage
	for _, n := range names {
		tagged := false
		for _, pl := range placed[n] {
			tagged = tagged || len(pl.Tags) > 0
		}
		images = append(images, dotenvImage{name: n, tagged: tagged, signer: s.who()})
	}
	return images
}
