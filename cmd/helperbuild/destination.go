package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/release"
)

// destination is where a run's images go, as the flags say: an OCI layout
// or archive (build), a registry (push), or a registry by digest and a
// part file (push --by-digest). The parse chooses which once; open then
// makes the publish.Destination that does the work.
type destination struct {
	output imageref.Ref   // build
	naming publish.Naming // push
	single bool           // config-free mode: the release has one image
	// names are the tag names --tag gives (build), or those of its
	// references (push, config-free); the plan of a config-free image
	// takes them.
	names []string
	// open makes the publish.Destination of a run of plan: registries are
	// reached with opts; an archive is built in tmp with file times at
	// epoch.
	open func(ctx context.Context, plan *recipe.Plan, opts imageref.Options, tmp string, epoch time.Time, log *slog.Logger) (publish.Destination, error)
	// part is the part file's release fields (push --by-digest), filled
	// once the release's metadata is known.
	part           part.File
	imagePlatforms map[string][]string
	contracts      map[string]string
}

func parseDestination(f *buildFlags, env Env, pkg string, push bool) (*destination, error) {
	if err := checkInsecure(f.insecure); err != nil {
		return nil, err
	}
	d := &destination{single: pkg != ""}
	if err := checkByDigest(f, push); err != nil {
		return nil, err
	}
	switch {
	case !push:
		d.open = d.openLayout
		return d, d.parseOutput(f)
	case f.byDigest:
		d.open = d.openByDigest(f.partFile)
	default:
		d.open = d.openRegistry
	}
	if d.single {
		return d, d.parseConfigFreeTags(f, env, pkg)
	}
	prefix := first(f.repo, env.Get("CI_REGISTRY_IMAGE"))
	if prefix == "" {
		return nil, usagef("push needs a repository prefix: set --repo registry.example.com/group (in GitLab CI, CI_REGISTRY_IMAGE sets it)")
	}
	if _, err := imageref.ParseRepository(prefix+"/x", f.insecure); err != nil {
		return nil, usagef("--repo %q: %v", prefix, err)
	}
	for _, t := range f.tags {
		if strings.ContainsAny(t, "/:@") {
			return nil, usagef("--tag %q: with helperbuild.yaml, --tag is a tag every image also gets (%s/<image>:TAG); give a tag such as v1.2.3, the repository comes from --repo", t, prefix)
		}
		if err := imageref.CheckTag(t); err != nil {
			return nil, usagef("--tag %q: %v", t, err)
		}
	}
	d.naming = publish.ByPrefix{Prefix: prefix, Insecure: f.insecure}
	return d, nil
}

// parseOutput reads build's --output and --tag: entry names of the layout
// (config-free, default latest) or tags every image's entries also get
// (recipe).
func (d *destination) parseOutput(f *buildFlags) error {
	ref, err := imageref.Parse(f.output, nil)
	if err != nil || (ref.Transport != imageref.Layout && ref.Transport != imageref.Archive) {
		return usagef("--output %q: want oci:DIR or oci-archive:FILE.tar", f.output)
	}
	if ref.Tag != "" {
		return usagef("--output %q: name entries with --tag, not in --output", f.output)
	}
	if err := checkOutputPath(ref); err != nil {
		return err
	}
	d.output = ref
	d.names = f.tags
	if len(d.names) == 0 && d.single {
		d.names = []string{"latest"}
	}
	for _, n := range d.names {
		if err := imageref.CheckTag(n); err != nil {
			return usagef("--tag %q: want a tag name such as v1.2.3: %v", n, err)
		}
	}
	return nil
}

// parseConfigFreeTags reads push's --tag in config-free mode: full
// references, or tags of PREFIX/<binary name> when --repo (or
// CI_REGISTRY_IMAGE) gives the prefix.
func (d *destination) parseConfigFreeTags(f *buildFlags, env Env, pkg string) error {
	if len(f.tags) == 0 {
		return usagef("push needs --tag REGISTRY/REPOSITORY:TAG, e.g. --tag registry.example.com/group/gitlab-runner-helper:v1.2.3 (or --repo registry.example.com/group --tag v1.2.3)")
	}
	prefix := first(f.repo, env.Get("CI_REGISTRY_IMAGE"))
	bare := 0
	var tags publish.ByTags
	for _, t := range f.tags {
		if _, ok := imageref.ExplicitRegistry(t); !ok {
			if strings.ContainsAny(t, "/:@") || prefix == "" {
				return usagef("--tag %q: name the registry, e.g. registry.example.com/group/app:v1.2.3 (docker.io/... for Docker Hub), or give --repo registry.example.com/group and --tag v1.2.3", t)
			}
			if err := imageref.CheckTag(t); err != nil {
				return usagef("--tag %q: %v", t, err)
			}
			image, err := recipe.PackageName(pkg, f.binaryName)
			if err != nil {
				return usageError{err}
			}
			t = strings.TrimSuffix(prefix, "/") + "/" + image + ":" + t
			bare++
		}
		tag, err := imageref.ParseTag(t, f.insecure)
		if err != nil {
			return usageError{err}
		}
		tags = append(tags, tag)
		d.names = append(d.names, tag.TagStr())
	}
	if f.repo != "" && bare == 0 {
		return usagef("--repo %s: every --tag names its registry, so --repo would change nothing; drop it, or give --tag TAG to push to %s/<binary name>:TAG", f.repo, f.repo)
	}
	d.naming = tags
	return nil
}

// String says where the images go, for the start line.
func (d *destination) String() string {
	switch n := d.naming.(type) {
	case publish.ByPrefix:
		return strings.TrimSuffix(n.Prefix, "/") + "/<image>"
	case publish.ByTags:
		refs := make([]string, len(n))
		for i, t := range n {
			refs[i] = t.String()
		}
		return strings.Join(refs, ", ")
	}
	return d.output.String()
}

// publishHeader and publishOutcome open and close the publish phase (merge
// closes its check phase with publishOutcome too).
func (d *destination) publishHeader() string {
	if d.naming != nil {
		return "publish: manifests by digest, checked, then tags"
	}
	return "publish: write " + d.output.String()
}

func publishOutcome(res *release.Result) string {
	indexes, manifests := len(res.Images), 0
	for _, img := range res.Images {
		manifests += len(img.Platforms)
	}
	return fmt.Sprintf("%d %s, %d %s", indexes, progress.Plural(indexes, "index", "indexes"), manifests, progress.Plural(manifests, "manifest", "manifests"))
}

// layoutTags are the tag names of a config-free image.
func (d *destination) layoutTags() []string { return d.names }

// openRegistry is push's destination: the registry (OnImage and OnLayer
// upload while the build runs).
func (d *destination) openRegistry(ctx context.Context, plan *recipe.Plan, opts imageref.Options, _ string, _ time.Time, log *slog.Logger) (publish.Destination, error) {
	var images []string
	for _, img := range plan.Images {
		images = append(images, img.Name)
	}
	return publish.NewRegistry(ctx, d.naming, images, opts, log)
}

// openByDigest is push --by-digest's destination: the registry's uploads,
// no tag, and the part file at path.
func (d *destination) openByDigest(path string) func(context.Context, *recipe.Plan, imageref.Options, string, time.Time, *slog.Logger) (publish.Destination, error) {
	return func(ctx context.Context, plan *recipe.Plan, opts imageref.Options, tmp string, epoch time.Time, log *slog.Logger) (publish.Destination, error) {
		reg, err := d.openRegistry(ctx, plan, opts, tmp, epoch, log)
		if err != nil {
			return nil, err
		}
		return &publish.ByDigest{Registry: reg.(*publish.Registry), PartFile: path, Part: d.part, ImagePlatforms: d.imagePlatforms, Contracts: d.contracts}, nil
	}
}

// openLayout is build's destination: an OCI layout, or a layout in a tar.
func (d *destination) openLayout(_ context.Context, _ *recipe.Plan, _ imageref.Options, tmp string, epoch time.Time, log *slog.Logger) (publish.Destination, error) {
	layout := publish.Layout{Ref: d.output, Single: d.single, Logger: log}
	if d.output.Transport == imageref.Archive {
		return &publish.Archive{Layout: layout, TempDir: tmp, Epoch: epoch}, nil
	}
	return &layout, nil
}

// checkInsecure validates --insecure-registry values: HOST or HOST:PORT.
func checkInsecure(hosts []string) error {
	for _, h := range hosts {
		if h == "" || strings.Contains(h, "/") || strings.ContainsAny(h, " \t@") {
			return usagef("--insecure-registry %q: want HOST or HOST:PORT, e.g. registry.local:5000 (no scheme or path)", h)
		}
	}
	return nil
}

// checkOutputPath fails before anything compiles when the output cannot be
// written (see publish.CheckLayoutDir and CheckArchiveFile).
func checkOutputPath(ref imageref.Ref) error {
	check := publish.CheckLayoutDir
	if ref.Transport == imageref.Archive {
		check = publish.CheckArchiveFile
	}
	if err := check(ref.Path); err != nil {
		return usagef("--output %s: %v", ref, err)
	}
	return nil
}
