package release

import (
	"cmp"
	"context"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// Where is the kind of place a run's images went, for the report.
type Where int

const (
	// InLayout is an OCI layout directory; InArchive one in a tar.
	InLayout Where = iota + 1
	InArchive
	// InRegistry is a registry, tagged.
	InRegistry
	// Pending is a registry by digest, untagged: merge writes the tags.
	Pending
)

// Destination is where a run's images go, as the request says: an OCI
// layout or archive (build), a registry (push), or a registry by digest
// and a part file (push --by-digest). Prepare chooses once; open makes the
// publish.Destination that does the work.
type Destination struct {
	Where  Where
	Output imageref.Ref   // build
	Naming publish.Naming // push
	single bool           // config-free mode: the release has one image
	// names are the tag names Tags give (build), or those of its
	// references (push, config-free); the plan of a config-free image
	// takes them.
	names []string
	// Part is the part file's release fields (push --by-digest), filled
	// once the release's metadata is known.
	Part           part.File
	imagePlatforms map[string][]string
	contracts      map[string]string
	partFile       string
}

// parseDestination checks where the request's images go.
func (r *Request) parseDestination() (*Destination, error) {
	if err := checkInsecure(r.Registry.Insecure); err != nil {
		return nil, err
	}
	d := &Destination{single: r.Package.Main != "", partFile: r.PartFile}
	if err := r.checkByDigest(); err != nil {
		return nil, err
	}
	switch {
	case !r.Push:
		d.Where = InLayout
		return d, d.parseOutput(r)
	case r.ByDigest:
		d.Where = Pending
	default:
		d.Where = InRegistry
	}
	if d.single {
		return d, d.parseConfigFreeTags(r)
	}
	prefix := cmp.Or(r.Repo, r.RepoFromEnv)
	if prefix == "" {
		return nil, inputf("push needs a repository prefix: set --repo registry.example.com/group (in GitLab CI, CI_REGISTRY_IMAGE sets it)")
	}
	if _, err := imageref.ParseRepository(prefix+"/x", r.Registry.Insecure); err != nil {
		return nil, inputf("--repo %q: %v", prefix, err)
	}
	for _, t := range r.Tags {
		if strings.ContainsAny(t, "/:@") {
			return nil, inputf("--tag %q: with helperbuild.yaml, --tag is a tag every image also gets (%s/<image>:TAG); give a tag such as v1.2.3, the repository comes from --repo", t, prefix)
		}
		if err := imageref.CheckTag(t); err != nil {
			return nil, inputf("--tag %q: %v", t, err)
		}
	}
	d.Naming = publish.ByPrefix{Prefix: prefix, Insecure: r.Registry.Insecure}
	return d, nil
}

// checkByDigest reads --by-digest and --part-file: one goes with the
// other, and the part file must be writable before anything compiles.
func (r *Request) checkByDigest() error {
	switch {
	case !r.Push:
		return nil
	case r.ByDigest && r.PartFile == "":
		return inputf("push --by-digest writes a part file for merge: give --part-file FILE, e.g. --part-file parts/$CI_JOB_ID.json")
	case !r.ByDigest && r.PartFile != "":
		return inputf("--part-file %s is written by push --by-digest only; add --by-digest (no tag, a part for merge), or drop --part-file", r.PartFile)
	case !r.ByDigest && r.ReleasePlatforms != nil:
		return inputf("--release-platforms names the whole release of a push --by-digest job; add --by-digest, or drop it (a push releases its --platforms)")
	case r.ByDigest && r.Outputs.Dotenv != "":
		return inputf("--dotenv %s with --by-digest: a job tags nothing, so there is no reference to report; give --dotenv to helperbuild merge", r.Outputs.Dotenv)
	case r.ByDigest:
		return checkOutputFile("--part-file", r.PartFile)
	}
	return nil
}

// parseOutput reads build's --output and --tag: entry names of the layout
// (config-free, default latest) or tags every image's entries also get
// (recipe).
func (d *Destination) parseOutput(r *Request) error {
	ref, err := imageref.Parse(r.Output, nil)
	if err != nil || (ref.Transport != imageref.Layout && ref.Transport != imageref.Archive) {
		return inputf("--output %q: want oci:DIR or oci-archive:FILE.tar", r.Output)
	}
	if ref.Tag != "" {
		return inputf("--output %q: name entries with --tag, not in --output", r.Output)
	}
	check := publish.CheckLayoutDir
	if ref.Transport == imageref.Archive {
		check, d.Where = publish.CheckArchiveFile, InArchive
	}
	if err := check(ref.Path); err != nil {
		return inputf("--output %s: %v", ref, err)
	}
	d.Output = ref
	d.names = r.Tags
	if len(d.names) == 0 && d.single {
		d.names = []string{"latest"}
	}
	for _, n := range d.names {
		if err := imageref.CheckTag(n); err != nil {
			return inputf("--tag %q: want a tag name such as v1.2.3: %v", n, err)
		}
	}
	return nil
}

// parseConfigFreeTags reads push's --tag in config-free mode: full
// references, or tags of PREFIX/<binary name> when --repo (or
// CI_REGISTRY_IMAGE) gives the prefix.
func (d *Destination) parseConfigFreeTags(r *Request) error {
	if len(r.Tags) == 0 {
		return inputf("push needs --tag REGISTRY/REPOSITORY:TAG, e.g. --tag registry.example.com/group/gitlab-runner-helper:v1.2.3 (or --repo registry.example.com/group --tag v1.2.3)")
	}
	prefix := cmp.Or(r.Repo, r.RepoFromEnv)
	bare := 0
	var tags publish.ByTags
	for _, t := range r.Tags {
		if _, ok := imageref.ExplicitRegistry(t); !ok {
			if strings.ContainsAny(t, "/:@") || prefix == "" {
				return inputf("--tag %q: name the registry, e.g. registry.example.com/group/app:v1.2.3 (docker.io/... for Docker Hub), or give --repo registry.example.com/group and --tag v1.2.3", t)
			}
			if err := imageref.CheckTag(t); err != nil {
				return inputf("--tag %q: %v", t, err)
			}
			image, err := recipe.PackageName(r.Package.Main, r.Package.BinaryName)
			if err != nil {
				return &InputError{err}
			}
			t = strings.TrimSuffix(prefix, "/") + "/" + image + ":" + t
			bare++
		}
		tag, err := imageref.ParseTag(t, r.Registry.Insecure)
		if err != nil {
			return &InputError{err}
		}
		tags = append(tags, tag)
		d.names = append(d.names, tag.TagStr())
	}
	if r.Repo != "" && bare == 0 {
		return inputf("--repo %s: every --tag names its registry, so --repo would change nothing; drop it, or give --tag TAG to push to %s/<binary name>:TAG", r.Repo, r.Repo)
	}
	d.Naming = tags
	return nil
}

// String says where the images go, for the start line.
func (d *Destination) String() string {
	switch n := d.Naming.(type) {
	case publish.ByPrefix:
		return strings.TrimSuffix(n.Prefix, "/") + "/<image>"
	case publish.ByTags:
		refs := make([]string, len(n))
		for i, t := range n {
			refs[i] = t.String()
		}
		return strings.Join(refs, ", ")
	}
	return d.Output.String()
}

// publishHeader opens the publish phase.
func (d *Destination) publishHeader() string {
	if d.Naming != nil {
		return "publish: manifests by digest, checked, then tags"
	}
	return "publish: write " + d.Output.String()
}

// destination is a publish.Destination and how it names what it
// published, for the report; every publish destination is both.
type destination interface {
	publish.Destination
	// Reference names img at the destination: a registry repository, or
	// the layout reference of its first entry.
	Reference(img publish.Image) string
	// Pinned is img's reference pinned by digest.
	Pinned(img publish.Image, digest v1.Hash) string
	// IndexTags are the full references of img's index tags.
	IndexTags(img publish.Image) []string
	// PlatformTag is the full reference of img's platform tag tag.
	PlatformTag(img publish.Image, tag string) string
}

// Open opens the run's destination as Execute does before building, in a
// session of its own that end closes (removing its directory).
func (p *Prepared) Open(ctx context.Context) (dest publish.Destination, end func(), err error) {
	s, err := openSession(p.Registry, "open", "", p.Logger, p.RetryLogger)
	if err != nil {
		return nil, nil, err
	}
	d, err := p.open(ctx, s)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return d, s.Close, nil
}

// open makes the publish.Destination of the run: registries are reached
// in s; an archive is built in s's directory with file times at the epoch.
func (p *Prepared) open(ctx context.Context, s *session) (destination, error) {
	d := p.Dest
	switch d.Where {
	case InLayout, InArchive:
		layout := publish.Layout{Ref: d.Output, Single: d.single, Logger: p.Logger}
		if d.Where == InArchive {
			return &publish.Archive{Layout: layout, TempDir: s.tmp, Epoch: p.Meta.Created}, nil
		}
		return &layout, nil
	}
	var names []string
	for _, img := range p.Plan.Images {
		names = append(names, img.Name)
	}
	if d.Where != Pending {
		return s.registryDestination(d.Naming, names, p.signing)
	}
	reg, err := s.registryDestination(d.Naming, names, publish.Signing{}) // a job's share is not signed
	if err != nil {
		return nil, err
	}
	return &publish.ByDigest{Registry: reg, PartFile: d.partFile, Part: d.Part, ImagePlatforms: d.imagePlatforms, Contracts: d.contracts}, nil
}

// checkInsecure validates --insecure-registry values: HOST or HOST:PORT.
func checkInsecure(hosts []string) error {
	for _, h := range hosts {
		if h == "" || strings.Contains(h, "/") || strings.ContainsAny(h, " \t@") {
			return inputf("--insecure-registry %q: want HOST or HOST:PORT, e.g. registry.local:5000 (no scheme or path)", h)
		}
	}
	return nil
}
