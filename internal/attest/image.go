package attest

import (
	"fmt"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// Image is the platform image an SBOM or a provenance is about.
type Image struct {
	// Name is the image's name in the recipe ("gitlab-runner-helper"); it
	// names the image in purls when Repository is empty.
	Name string
	// Repository, if set, is where the image is published
	// ("registry.example.com/group/gitlab-runner-helper"): purls then carry
	// it as repository_url and take their name from its last element. It
	// makes the attestations, and so the index digest, depend on the
	// destination; leave it empty to keep a build's digest the same
	// wherever it is written.
	Repository string
	// Manifest is the platform manifest: media type, digest and size, and
	// its platform. All are required.
	Manifest v1.Descriptor
}

func (im Image) check() error {
	switch {
	case im.Name == "" && im.Repository == "":
		return fmt.Errorf("image without a name: set Image.Name")
	case im.Manifest.Digest == (v1.Hash{}):
		return fmt.Errorf("image %s: no manifest digest", im.Name)
	case im.Manifest.MediaType == "" || im.Manifest.Size <= 0:
		return fmt.Errorf("image %s: manifest descriptor needs a media type and a size", im.Name)
	case im.Manifest.Platform == nil || im.Manifest.Platform.OS == "" || im.Manifest.Platform.Architecture == "":
		return fmt.Errorf("image %s@%s: manifest descriptor has no platform", im.Name, im.Manifest.Digest)
	}
	return nil
}

func (im Image) platform() v1.Platform { return platform.Normalize(*im.Manifest.Platform) }

// label is how the image is called in names: the repository, else the name.
func (im Image) label() string {
	if im.Repository != "" {
		return im.Repository
	}
	return im.Name
}

// purl is the image's pkg:oci purl: digest, platform and, when known, the
// repository.
func (im Image) purl() purl {
	n := im.Name
	if im.Repository != "" {
		n = path.Base(im.Repository)
	}
	p := im.platform()
	return ociPurl(n, im.Repository, "", im.Manifest.Digest, &p)
}

// subject is the platform manifest as an in-toto statement's subject.
func (im Image) subject() resourceDescriptor {
	return resourceDescriptor{Name: im.purl().String(), Digest: digestSet(im.Manifest.Digest)}
}

// Base is a base image a platform image was built on.
type Base struct {
	// Ref is the registry reference as written in the Dockerfile or on the
	// command line ("registry.example.com/base/helper:alpine"); for a base
	// from an OCI layout or archive (Layout), the entry's ref name
	// ("gitlab-runner-helper:v17.10.0") or digest, never the host path.
	// "" and "scratch" mean no base.
	Ref string
	// Layout says Ref names an entry of an OCI layout or archive.
	Layout bool
	// Digest is the base's platform manifest digest: what the image's
	// org.opencontainers.image.base.digest annotation holds.
	Digest v1.Hash
}

// none reports whether b stands for no base at all.
func (b Base) none() bool { return b.Ref == "" || b.Ref == "scratch" }

// purl is the base's pkg:oci purl for platform p. A registry reference
// gives the name, repository_url and tag; a layout's entry its ref name
// (NAME:TAG: the name's last element and the tag; a ref name without
// ":" is a tag of a base called "base"), or "base" alone for an entry
// named by digest.
func (b Base) purl(p v1.Platform) (purl, error) {
	if b.Digest == (v1.Hash{}) {
		return purl{}, fmt.Errorf("base %s: no digest", b.Ref)
	}
	if b.Layout {
		n, tag := "base", ""
		switch repo, t, ok := strings.Cut(b.Ref, ":"); {
		case strings.HasPrefix(b.Ref, "sha256:"):
		case ok:
			n, tag = path.Base(repo), t
		default:
			tag = b.Ref
		}
		return ociPurl(n, "", tag, b.Digest, &p), nil
	}
	ref, err := imageref.Parse(b.Ref, nil)
	if err != nil {
		return purl{}, fmt.Errorf("base: %w", err)
	}
	var n, repo, tag string
	switch ref.Transport {
	case imageref.Registry:
		repo = ref.Name.Context().Name()
		n = path.Base(ref.Name.Context().RepositoryStr())
		if t, ok := ref.Name.(name.Tag); ok {
			tag = t.TagStr()
		}
	case imageref.Layout, imageref.Archive:
		n = strings.TrimSuffix(path.Base(ref.Path), ".tar")
		tag = ref.Tag
	default:
		return purl{}, fmt.Errorf("base %s: not an image", b.Ref)
	}
	return ociPurl(n, repo, tag, b.Digest, &p), nil
}

// digestSet is h as an in-toto DigestSet.
func digestSet(h v1.Hash) map[string]string { return map[string]string{h.Algorithm: h.Hex} }
