package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/release"
)

// destination is where a run's images go: an OCI layout or archive (build),
// or a registry (push).
type destination struct {
	push       bool
	configFree bool
	output     imageref.Ref // build
	prefix     string       // push, recipe mode: images go to PREFIX/<name>
	tagRefs    []name.Tag   // push, config-free mode
	names      []string     // build, config-free mode: layout entry names
	insecure   []string
	uploader   *publish.Uploader // push: sends blobs while the build runs
}

func parseDestination(f *buildFlags, env Env, pkg string, push bool) (*destination, error) {
	if err := checkInsecure(f.insecure); err != nil {
		return nil, err
	}
	d := &destination{push: push, configFree: pkg != "", insecure: f.insecure}
	switch {
	case !push:
		return d, d.parseOutput(f)
	case d.configFree:
		return d, d.parseConfigFreeTags(f, env, pkg)
	}
	d.prefix = first(f.repo, env.Get("CI_REGISTRY_IMAGE"))
	if d.prefix == "" {
		return nil, usagef("push needs a repository prefix: set --repo registry.example.com/group (in GitLab CI, CI_REGISTRY_IMAGE sets it)")
	}
	if _, err := imageref.ParseRepository(d.prefix+"/x", f.insecure); err != nil {
		return nil, usagef("--repo %q: %v", d.prefix, err)
	}
	for _, t := range f.tags {
		if strings.ContainsAny(t, "/:@") {
			return nil, usagef("--tag %q: with helperbuild.yaml, --tag is a tag every image also gets (%s/<image>:TAG); give a tag such as v1.2.3, the repository comes from --repo", t, d.prefix)
		}
		if err := imageref.CheckTag(t); err != nil {
			return nil, usagef("--tag %q: %v", t, err)
		}
	}
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
	if len(d.names) == 0 && d.configFree {
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
		d.tagRefs = append(d.tagRefs, tag)
	}
	if f.repo != "" && bare == 0 {
		return usagef("--repo %s: every --tag names its registry, so --repo would change nothing; drop it, or give --tag TAG to push to %s/<binary name>:TAG", f.repo, f.repo)
	}
	return nil
}

// layoutTags are the tag names of a config-free image.
func (d *destination) layoutTags() []string {
	if !d.push {
		return d.names
	}
	var out []string
	for _, t := range d.tagRefs {
		out = append(out, t.TagStr())
	}
	return out
}

// reference is where an image of res ends up, for the report.
//
// For a layout it is the reference of the image's first entry, usable as is
// by verify and skopeo: oci:DIR:TAG, or oci:DIR:NAME:TAG for a recipe.
func (d *destination) reference(img release.Image) string {
	switch {
	case !d.push:
		entry := "latest"
		switch {
		case len(img.Tags) > 0:
			entry = img.Tags[0]
		case !d.configFree:
			return d.output.String() + ":" + img.Name // untagged: listed by name
		}
		if !d.configFree {
			entry = img.Name + ":" + entry
		}
		return d.output.String() + ":" + entry
	case d.configFree:
		return d.tagRefs[0].Context().String()
	}
	return strings.TrimSuffix(d.prefix, "/") + "/" + img.Name
}

// repositories lists the registry repositories a push of plan writes to.
func (d *destination) repositories(plan *recipe.Plan) []name.Repository {
	var out []name.Repository
	seen := map[string]bool{}
	add := func(r name.Repository) {
		if !seen[r.String()] {
			seen[r.String()] = true
			out = append(out, r)
		}
	}
	if d.configFree {
		for _, t := range d.tagRefs {
			add(t.Context())
		}
		return out
	}
	for _, img := range plan.Images {
		add(d.imageRepository(img.Name))
	}
	return out
}

// imageRepository is PREFIX/<image name> in recipe mode. parseDestination
// checked the prefix and recipe checked the name, so it parses.
func (d *destination) imageRepository(image string) name.Repository {
	r, _ := imageref.ParseRepository(strings.TrimSuffix(d.prefix, "/")+"/"+image, d.insecure)
	return r
}

// prepare readies a push by setting ro's hooks: Preflight checks, before
// anything compiles, that the credentials may push to every repository (one
// line naming the registry when not; the repositories are checked at once,
// the first failure in order is reported); OnImage sends each platform's
// blobs as soon as it is assembled and checked; OnLayer streams the layers
// of the last platforms while they are written. Builds need none.
func (d *destination) prepare(ctx context.Context, plan *recipe.Plan, opts imageref.Options, log *slog.Logger, ro *release.Options) error {
	if !d.push {
		return nil
	}
	repos := d.repositories(plan)
	ro.Preflight = func(ctx context.Context) error {
		errs := make([]error, len(repos))
		var wg sync.WaitGroup
		for i, repo := range repos {
			wg.Go(func() { errs[i] = publish.CheckPush(ctx, repo, opts.Keychain, opts.HTTPTransport()) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if d.uploader, err = publish.NewUploader(d.registryOptions(ctx, opts, log)); err != nil {
		return err
	}
	// The hooks use the run's context, not the assembly's: the uploader's
	// connections outlive the build and serve the tag phase.
	ro.OnImage = func(_ context.Context, image string, _ v1.Platform, img v1.Image) error {
		for _, repo := range d.repositoriesOf(plan, image) {
			if err := d.uploader.Image(ctx, repo, img); err != nil {
				return err
			}
		}
		return nil
	}
	ro.OnLayer = func(_ context.Context, image string, _ v1.Platform, l v1.Layer) error {
		var g errgroup.Group // each repository reads the stream on its own
		for _, repo := range d.repositoriesOf(plan, image) {
			g.Go(func() error { return d.uploader.Layer(ctx, repo, l) })
		}
		return g.Wait()
	}
	return nil
}

// registryOptions are how publish reaches the registries of this run.
func (d *destination) registryOptions(ctx context.Context, opts imageref.Options, log *slog.Logger) publish.RegistryOptions {
	return publish.RegistryOptions{Remote: opts.RemoteOptions(ctx), Logger: log}
}

// repositoriesOf lists the repositories the image named image goes to.
func (d *destination) repositoriesOf(plan *recipe.Plan, image string) []name.Repository {
	if d.configFree {
		return d.repositories(plan)
	}
	return []name.Repository{d.imageRepository(image)}
}

// indexTags are the tags that point at img's index, as full references
// when pushing.
func (d *destination) indexTags(img release.Image) []string {
	out := []string{}
	switch {
	case d.push && d.configFree:
		for _, t := range d.tagRefs {
			out = append(out, t.String())
		}
	case d.push:
		for _, t := range img.Tags {
			out = append(out, d.reference(img)+":"+t)
		}
	default:
		out = append(out, img.Tags...)
	}
	return out
}

// images converts a build result into what publish takes.
func (d *destination) images(res *release.Result) []publish.Image {
	var out []publish.Image
	for _, img := range res.Images {
		p := publish.Image{Index: img.Index}
		for _, pl := range img.Platforms {
			for _, t := range pl.Tags {
				p.PlatformTags = append(p.PlatformTags, publish.PlatformTag{Manifest: pl.Digest, Tag: t})
			}
		}
		switch {
		case !d.push:
			p.Tags = img.Tags
			if !d.configFree {
				p.Name = img.Name
			}
			out = append(out, p)
		case d.configFree:
			// One publish.Image per repository named by --tag.
			byRepo := map[string]int{}
			for _, t := range d.tagRefs {
				repo := t.Context()
				i, ok := byRepo[repo.String()]
				if !ok {
					i = len(out)
					byRepo[repo.String()] = i
					q := p
					q.Repository, q.Tags = repo, nil
					out = append(out, q)
				}
				out[i].Tags = append(out[i].Tags, t.TagStr())
			}
		default:
			p.Repository = d.imageRepository(img.Name)
			p.Tags = img.Tags
			out = append(out, p)
		}
	}
	return out
}

func (d *destination) publish(ctx context.Context, res *release.Result, opts imageref.Options, epoch time.Time, tmp string, log *slog.Logger) error {
	images := d.images(res)
	switch {
	case d.push:
		ro := d.registryOptions(ctx, opts, log)
		ro.Uploader = d.uploader
		_, err := publish.ToRegistry(ctx, images, ro)
		return err
	case d.output.Transport == imageref.Archive:
		if err := publish.ToArchive(ctx, d.output.Path, tmp, epoch, images); err != nil {
			return err
		}
	default:
		if err := publish.ToLayout(ctx, d.output.Path, images); err != nil {
			return err
		}
	}
	log.Info("written", "output", d.output.String())
	return nil
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
