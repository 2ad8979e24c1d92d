package publish

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/helperbuild/helperbuild/internal/registry"
)

// Signer signs a release's manifests for ToRegistry, once every manifest
// is in place by digest and before any tag moves.
type Signer interface {
	// Referrer is subject's signature as an OCI 1.1 referrer of it (a
	// Sigstore bundle).
	Referrer(ctx context.Context, repo name.Repository, subject v1.Descriptor) (Referrer, error)
	// AppendLegacy adds subject's signature in cosign's legacy format to
	// cosign's signature image base (nil: there is none yet).
	AppendLegacy(ctx context.Context, repo name.Repository, subject v1.Hash, base v1.Image) (v1.Image, error)
	// LegacyReferrer is subject's signature in cosign's legacy format as
	// an OCI 1.1 referrer of it (artifactType
	// application/vnd.dev.cosign.artifact.sig.v1+json). A following
	// AppendLegacy of the same subject may carry the same signature.
	LegacyReferrer(ctx context.Context, repo name.Repository, subject v1.Descriptor) (Referrer, error)
}

// SignFormat says which of cosign's formats a signature takes.
type SignFormat string

const (
	// SignBundle is a Sigstore bundle as an OCI 1.1 referrer (cosign v3's
	// default): the referrers API, else the sha256-<hex> fallback tag.
	SignBundle SignFormat = "bundle"
	// SignLegacy is cosign's sha256-<hex>.sig tag.
	SignLegacy SignFormat = "legacy"
	// SignLegacyReferrer is cosign's legacy signature in its OCI 1.1 form
	// (cosign sign --registry-referrers-mode=oci-1-1): a referrer of the
	// signed digest, listed by the referrers API, else by the fallback
	// tag. A registry that resolves sha256-<hex> to the subject (GitLab's)
	// gets it by digest only, no fallback tag (GitLab lists it by subject
	// as the image's signature), and the .sig tag beside it for verifiers.
	SignLegacyReferrer SignFormat = "legacy-referrer"
	// SignAuto is SignBundle, except SignLegacy on a registry without the
	// referrers API that resolves sha256-<hex> to the subject itself
	// (GitLab's), where no fallback tag can be written.
	SignAuto SignFormat = "auto"
)

// Signing configures signing in ToRegistry; a nil Signer signs nothing.
type Signing struct {
	Signer Signer
	Format SignFormat
	// Identity names the signer for the report (a key's hint, or the
	// certificate's identity and issuer).
	Identity string
	// Preflight, if set, checks that the services signing needs answer;
	// a registry destination's preflight runs it beside the push check,
	// before anything compiles.
	Preflight func(ctx context.Context) error
}

// Signature is one signature ToRegistry wrote.
type Signature struct {
	Repository name.Repository
	Subject    v1.Hash
	Format     SignFormat // SignBundle or SignLegacy
	// Digest is the signature's manifest: the bundle referrer, or the
	// .sig image that holds it among others.
	Digest v1.Hash
	// Tag is the legacy .sig tag; "" for a bundle.
	Tag string
}

// legacyTag is a .sig image to tag before the release's tags.
type legacyTag struct {
	repo  name.Repository
	tag   string
	image v1.Image
}

// signAll signs every image's index and each of its entries, in the
// format chosen for its repository: bundles are pushed by digest and added
// to images' referrers (planFallbacks lists them), legacy .sig images are
// pushed by digest and returned for the tag phase. Nothing is tagged here.
func (p *publisher) signAll(ctx context.Context, images []Image, repos []name.Repository, s Signing) ([]legacyTag, []Signature, error) {
	var tags []legacyTag
	var sigs []Signature
	for i := range images {
		subjects, err := signSubjects(images[i].Index)
		if err != nil {
			return nil, nil, err
		}
		pushed := len(images[i].Referrers) // the attestations, pushed already
		format, unlisted, err := p.signFormat(ctx, repos[i], subjects[0].Digest, s.Format)
		if err != nil {
			return nil, nil, err
		}
		p.log.Info("signing", "repository", repos[i].String(), "format", string(format), "manifests", len(subjects))
		var byDigest []Referrer // referrers no listing names: pushed, not planned
		for _, sub := range subjects {
			if format == SignLegacy {
				lt, sig, err := p.signLegacy(ctx, repos[i], sub.Digest, s.Signer)
				if err != nil {
					return nil, nil, err
				}
				tags, sigs = append(tags, lt), append(sigs, sig)
				continue
			}
			r, err := signReferrer(ctx, s.Signer, format, repos[i], sub)
			if err != nil {
				return nil, nil, err
			}
			sigs = append(sigs, Signature{Repository: repos[i], Subject: sub.Digest, Format: format, Digest: r.Entry.Digest})
			if !unlisted {
				images[i].Referrers = append(images[i].Referrers, r)
				continue
			}
			byDigest = append(byDigest, r)
			lt, sig, err := p.signLegacy(ctx, repos[i], sub.Digest, s.Signer)
			if err != nil {
				return nil, nil, err
			}
			tags, sigs = append(tags, lt), append(sigs, sig)
		}
		if err := p.pushSignatureReferrers(ctx, repos[i], append(images[i].Referrers[pushed:len(images[i].Referrers):len(images[i].Referrers)], byDigest...)); err != nil {
			return nil, nil, err
		}
	}
	return tags, sigs, nil
}

// signReferrer signs sub as a referrer in format (bundle or legacy-referrer).
func signReferrer(ctx context.Context, s Signer, format SignFormat, repo name.Repository, sub v1.Descriptor) (Referrer, error) {
	sign := s.Referrer
	if format == SignLegacyReferrer {
		sign = s.LegacyReferrer
	}
	r, err := sign(ctx, repo, sub)
	if err != nil {
		return Referrer{}, fmt.Errorf("sign %s@%s: %w", repo, sub.Digest, err)
	}
	return r, nil
}

// pushSignatureReferrers pushes the referrers (the signatures among them)
// by digest and checks each is there.
func (p *publisher) pushSignatureReferrers(ctx context.Context, repo name.Repository, refs []Referrer) error {
	if err := p.pushReferrers(ctx, repo, refs); err != nil {
		return err
	}
	for _, r := range refs {
		ref := repo.Digest(r.Entry.Digest.String())
		if _, err := p.reg.Head(ctx, ref); err != nil {
			return fmt.Errorf("check %s: %w", ref, registry.Explain(err))
		}
	}
	return nil
}

// signLegacy reads subject's .sig image (if any), adds the signature and
// pushes the result by digest.
func (p *publisher) signLegacy(ctx context.Context, repo name.Repository, subject v1.Hash, s Signer) (legacyTag, Signature, error) {
	tag := subject.Algorithm + "-" + subject.Hex + ".sig"
	// A copy from the source (copyCosignTags) holds the tag's signatures
	// and the source's: signing adds to it.
	base, copied := p.cosignBase[repo.Tag(tag).String()]
	if !copied {
		img, err := p.reg.Image(ctx, repo.Tag(tag))
		var terr *transport.Error
		switch {
		case err == nil:
			base = img
		case errors.As(err, &terr) && terr.StatusCode == 404:
		default:
			return legacyTag{}, Signature{}, fmt.Errorf("read %s:%s: %w", repo, tag, registry.Explain(err))
		}
	}
	out, err := s.AppendLegacy(ctx, repo, subject, base)
	if err != nil {
		return legacyTag{}, Signature{}, fmt.Errorf("sign %s@%s: %w", repo, subject, err)
	}
	d, err := out.Digest()
	if err != nil {
		return legacyTag{}, Signature{}, err
	}
	if err := p.reg.Push(ctx, repo.Digest(d.String()), out); err != nil {
		return legacyTag{}, Signature{}, fmt.Errorf("push %s@%s: %w", repo, d, registry.Explain(err))
	}
	return legacyTag{repo: repo, tag: tag, image: out}, Signature{Repository: repo, Subject: subject, Format: SignLegacy, Digest: d, Tag: tag}, nil
}

// signFormat decides the format for repo, whose index is in place: bundle
// and auto keep bundles where the registry has the referrers API or can
// hold the fallback tag; a registry that resolves sha256-<hex> to the
// subject itself refuses bundle, turns auto to legacy and has
// legacy-referrer's referrers pushed by digest alone (unlisted).
func (p *publisher) signFormat(ctx context.Context, repo name.Repository, index v1.Hash, want SignFormat) (format SignFormat, unlisted bool, err error) {
	switch want {
	case SignLegacy:
		return SignLegacy, false, nil
	case SignBundle, SignAuto, SignLegacyReferrer, "":
	default:
		return "", false, fmt.Errorf("signature format %q: want bundle, legacy, legacy-referrer or auto", want)
	}
	format = want
	if want == SignAuto || want == "" {
		format = SignBundle
	}
	api, err := p.reg.HasReferrersAPI(ctx, repo, index)
	if err != nil {
		return "", false, err
	}
	if api {
		return format, false, nil
	}
	tag := FallbackTag(index)
	raw, _, found, err := p.reg.GetManifest(ctx, repo, tag)
	if err != nil {
		return "", false, fmt.Errorf("read %s:%s: %w", repo, tag, registry.Explain(err))
	}
	switch {
	case !found || resolvesToSubject(repo, tag, index, raw) == nil:
		return format, false, nil
	case want == SignLegacyReferrer:
		return format, true, nil
	case want == SignAuto || want == "":
		return SignLegacy, false, nil
	}
	return "", false, fmt.Errorf("registry %s resolves the tag %s to the manifest %s itself, so it cannot hold the signature bundles' referrers fallback tag; sign with --sign-format legacy (cosign's %s.sig tags), legacy-referrer or auto",
		repo.RegistryStr(), tag, index, tag)
}

// signSubjects are the index's descriptor, then each of its entries
// (platform images and attestation manifests).
func signSubjects(idx v1.ImageIndex) ([]v1.Descriptor, error) {
	d, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	size, err := idx.Size()
	if err != nil {
		return nil, err
	}
	mt, err := idx.MediaType()
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	out := []v1.Descriptor{{MediaType: mt, Digest: d, Size: size}}
	for _, m := range im.Manifests {
		out = append(out, v1.Descriptor{MediaType: m.MediaType, Digest: m.Digest, Size: m.Size})
	}
	return out, nil
}
