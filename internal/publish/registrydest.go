package publish

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/registry"
)

// Registry publishes to registries with ToRegistry. While the release
// builds, it checks beforehand that it may push to every repository, sends
// each platform's blobs as soon as the platform is checked and streams the
// layers of the last platforms while they are written (see Uploader).
type Registry struct {
	naming   Naming
	images   []string // the release's image names
	opts     imageref.Options
	log      *slog.Logger
	session  *registry.Session // the uploads' and the release's
	uploader *Uploader
	signing  Signing
	// signatures are those Publish wrote.
	signatures []Signature
}

// Naming says where in a registry each image of a release goes: ByPrefix
// or ByTags.
type Naming interface {
	// repositories are the repositories the image named image goes to.
	repositories(image string) []name.Repository
	// split gives img's Repository and Tags, once per repository.
	split(img Image) []Image
	// reference names the image named image, for the report.
	reference(image string) string
	// indexTags are img's index tags as full references.
	indexTags(img Image) []string
}

// NewRegistry makes the registry destination of a release whose images
// are named images, reaching registries with opts.
func NewRegistry(to Naming, images []string, opts imageref.Options, log *slog.Logger) (*Registry, error) {
	session, err := registry.NewSession(opts)
	if err != nil {
		return nil, err
	}
	return &Registry{naming: to, images: images, opts: opts, log: log, session: session, uploader: NewUploader(session, log)}, nil
}

// registryOptions are how ToRegistry reaches the registries: on the
// Session the Uploader sent blobs with.
func (r *Registry) registryOptions() RegistryOptions {
	return RegistryOptions{Session: r.session, Logger: r.log, Signing: r.signing}
}

// SignWith makes Publish sign every index and entry before any tag moves
// (see Signer); a nil Signer signs nothing.
func (r *Registry) SignWith(s Signing) { r.signing = s }

// Signatures are the signatures Publish wrote in img's repository, in
// order, and who signed them.
func (r *Registry) Signatures(img Image) ([]Signature, string) {
	var out []Signature
	for _, s := range r.signatures {
		if s.Repository.String() == r.Reference(img) {
			out = append(out, s)
		}
	}
	return out, r.signing.Identity
}

// Repositories lists every repository of the release, once, in order.
func (r *Registry) Repositories() []name.Repository {
	var out []name.Repository
	seen := map[string]bool{}
	for _, image := range r.images {
		for _, repo := range r.naming.repositories(image) {
			if !seen[repo.String()] {
				seen[repo.String()] = true
				out = append(out, repo)
			}
		}
	}
	return out
}

// Hooks: Preflight checks, before any compile shows or any layer is
// written, that the credentials
// may push to every repository (one line naming the registry when not; the
// repositories are checked at once, the first failure in order is
// reported); OnImage sends each platform's blobs and its manifest by
// digest (no tag) as soon as it is assembled and checked; OnLayer streams the layers of the last platforms
// while they are written, to each repository on its own.
func (r *Registry) Hooks(ctx context.Context) Hooks {
	return Hooks{
		Preflight: r.preflight,
		OnImage: func(hctx context.Context, image string, _ v1.Platform, img v1.Image) error {
			ctx := registry.CarryCounter(ctx, hctx) // the release counts the bytes sent
			for _, repo := range r.naming.repositories(image) {
				if err := r.uploader.Image(ctx, repo, img); err != nil {
					return err
				}
			}
			return nil
		},
		OnLayer: func(hctx context.Context, image string, _ v1.Platform, l v1.Layer) error {
			ctx := registry.CarryCounter(ctx, hctx)
			var g errgroup.Group // each repository reads the stream on its own
			for _, repo := range r.naming.repositories(image) {
				g.Go(func() error { return r.uploader.Layer(ctx, repo, l) })
			}
			return g.Wait()
		},
	}
}

// preflight checks every repository at once with registry.CheckPush,
// and beside them the signing services (Signing.Preflight), whose failure
// is reported first and ends the push checks at once.
func (r *Registry) preflight(ctx context.Context) error {
	repos := r.Repositories()
	errs := make([]error, len(repos)+1)
	var wg sync.WaitGroup
	if r.signing.Preflight != nil {
		sctx := ctx
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		defer stop()
		wg.Go(func() {
			if errs[0] = r.signing.Preflight(sctx); errs[0] != nil {
				stop()
			}
		})
	}
	for i, repo := range repos {
		wg.Go(func() { errs[i+1] = registry.CheckPush(ctx, repo, r.opts.Keychain, registry.HTTPTransport(r.opts)) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Publish publishes images with ToRegistry, finding in place the blobs the
// hooks sent.
func (r *Registry) Publish(ctx context.Context, images []Image) error {
	var out []Image
	for _, img := range images {
		out = append(out, r.naming.split(img)...)
	}
	res, err := ToRegistry(ctx, out, r.registryOptions())
	if res != nil {
		r.signatures = res.Signatures
	}
	return err
}

// Reference is the image's repository.
func (r *Registry) Reference(img Image) string { return r.naming.reference(img.Name) }

// Pinned is REPOSITORY@DIGEST.
func (r *Registry) Pinned(img Image, digest v1.Hash) string {
	return r.Reference(img) + "@" + digest.String()
}

// IndexTags are full references.
func (r *Registry) IndexTags(img Image) []string { return r.naming.indexTags(img) }

// PlatformTag is REPOSITORY:TAG.
func (r *Registry) PlatformTag(img Image, tag string) string { return r.Reference(img) + ":" + tag }

// ByPrefix sends the image named NAME to PREFIX/NAME with its own tags
// (a recipe's images).
type ByPrefix struct {
	// Prefix is as the user wrote it (registry.example.com/group), checked
	// to give a valid repository with any valid image name.
	Prefix   string
	Insecure []string // hosts that may be reached insecurely
}

func (p ByPrefix) reference(image string) string {
	return strings.TrimSuffix(p.Prefix, "/") + "/" + image
}

// repositories is PREFIX/<image>. The caller checked the prefix and recipe
// checked the name, so it parses.
func (p ByPrefix) repositories(image string) []name.Repository {
	r, _ := imageref.ParseRepository(p.reference(image), p.Insecure)
	return []name.Repository{r}
}

func (p ByPrefix) split(img Image) []Image {
	img.Repository = p.repositories(img.Name)[0]
	return []Image{img}
}

func (p ByPrefix) indexTags(img Image) []string {
	out := []string{}
	for _, t := range img.Tags {
		out = append(out, p.reference(img.Name)+":"+t)
	}
	return out
}

// ByTags sends the release's one image to every repository of Tags, each
// with its tags there (config-free mode's --tag references).
type ByTags []name.Tag

func (ts ByTags) reference(string) string { return ts[0].Context().String() }

func (ts ByTags) repositories(string) []name.Repository {
	var out []name.Repository
	seen := map[string]bool{}
	for _, t := range ts {
		if r := t.Context(); !seen[r.String()] {
			seen[r.String()] = true
			out = append(out, r)
		}
	}
	return out
}

// split gives one Image per repository named by the tags.
func (ts ByTags) split(img Image) []Image {
	var out []Image
	byRepo := map[string]int{}
	for _, t := range ts {
		repo := t.Context()
		i, ok := byRepo[repo.String()]
		if !ok {
			i = len(out)
			byRepo[repo.String()] = i
			q := img
			q.Repository, q.Tags = repo, nil
			out = append(out, q)
		}
		out[i].Tags = append(out[i].Tags, t.TagStr())
	}
	return out
}

func (ts ByTags) indexTags(Image) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}
