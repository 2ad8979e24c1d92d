package sign

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/helperbuild/helperbuild/internal/imageref"
)

// Registry is where VerifyDigest reads signatures: internal/registry's
// Reader, on the run's transport. Its errors are explained already, and a
// 404 of an image is imageref.ErrNotFound.
type Registry interface {
	// Referrers lists the referrers of ref (the API or the fallback tag).
	Referrers(ctx context.Context, ref name.Digest) (*v1.IndexManifest, error)
	// Image reads the image ref names.
	Image(ctx context.Context, ref name.Reference) (v1.Image, error)
}

// maxSignatureBlob bounds a bundle or payload read from a registry.
const maxSignatureBlob = 1 << 20

// Found says what VerifyDigest found: how many signatures of each format,
// and which verified.
type Found struct {
	// Legacy counts legacy signatures: in the .sig tag's image and in
	// legacy referrers.
	Bundles, Legacy int
	// Valid is the format of the first signature that verified ("bundle",
	// "legacy-referrer" or "legacy"); "" when none did.
	Valid string
	// Reason is why none verified, naming the first refusal.
	Reason string
}

// VerifyDigest looks for the signatures of repo@d in both of cosign's
// places, bundles and legacy signatures (cosign's OCI 1.1 form) among its
// referrers (the API or the fallback tag) and the legacy sha256-<hex>.sig
// tag, and checks them until one verifies.
// The error is for failures to read the registry; what the signatures
// are worth is in Found.
func (v *Verifier) VerifyDigest(ctx context.Context, repo name.Repository, d v1.Hash, reg Registry) (Found, error) {
	var f Found
	var refusals []error
	im, err := reg.Referrers(ctx, repo.Digest(d.String()))
	if err != nil {
		return f, fmt.Errorf("referrers of %s@%s: %w", repo, d, err)
	}
	for _, m := range im.Manifests {
		ok, errs, err := v.verifyReferrer(ctx, repo.Digest(m.Digest.String()), m, d, reg, &f)
		if err != nil {
			return f, err
		}
		if ok != "" {
			f.Valid = ok
			return f, nil
		}
		refusals = append(refusals, errs...)
	}
	img, err := reg.Image(ctx, repo.Tag(LegacyTag(d)))
	switch {
	case errors.Is(err, imageref.ErrNotFound):
	case err != nil:
		return f, fmt.Errorf("read %s:%s: %w", repo, LegacyTag(d), err)
	default:
		ok, errs, err := v.verifyLegacyImage(img, d, &f)
		if err != nil {
			return f, fmt.Errorf("%s:%s: %w", repo, LegacyTag(d), err)
		}
		if ok {
			f.Valid = "legacy"
			return f, nil
		}
		refusals = append(refusals, errs...)
	}
	switch {
	case f.Bundles+f.Legacy == 0:
		f.Reason = fmt.Sprintf("not signed: no Sigstore bundle among the referrers of %s, no legacy signature among them either, and no %s tag", d, LegacyTag(d))
	default:
		f.Reason = fmt.Sprintf("%d signature(s) of %s, none valid: %v", f.Bundles+f.Legacy, d, refusals[0])
	}
	return f, nil
}

// verifyReferrer checks the referrer m of d, when it is a signature: a
// bundle, or a legacy signature in cosign's OCI 1.1 form. ok is the
// format that verified; errs why those it found did not.
func (v *Verifier) verifyReferrer(ctx context.Context, ref name.Digest, m v1.Descriptor, d v1.Hash, reg Registry, f *Found) (ok string, errs []error, err error) {
	if m.ArtifactType == MediaTypeLegacyReferrer {
		img, err := reg.Image(ctx, ref)
		if err != nil {
			return "", nil, fmt.Errorf("read %s: %w", ref, err)
		}
		valid, errs, err := v.verifyLegacyImage(img, d, f)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", ref, err)
		}
		if valid {
			return "legacy-referrer", nil, nil
		}
		return "", errs, nil
	}
	// A registry's listing may give the config's media type as the
	// artifactType (go-containerregistry's does): as cosign, look at
	// every referrer that is not plainly something else.
	if m.ArtifactType != MediaTypeBundle && m.ArtifactType != "" && m.ArtifactType != string(types.OCIEmptyJSON) {
		return "", nil, nil
	}
	b, isBundle, err := bundleOf(ctx, ref, reg)
	if !isBundle {
		return "", nil, nil
	}
	f.Bundles++
	if err == nil {
		err = v.VerifyBundle(b, d)
	}
	if err == nil {
		return "bundle", nil, nil
	}
	return "", []error{fmt.Errorf("bundle %s: %w", m.Digest, err)}, nil
}

// verifyLegacyImage checks each simple-signing layer of a .sig image.
func (v *Verifier) verifyLegacyImage(img v1.Image, d v1.Hash, f *Found) (bool, []error, error) {
	m, err := img.Manifest()
	if err != nil {
		return false, nil, err
	}
	var refusals []error
	for _, l := range m.Layers {
		if l.MediaType != MediaTypeSimpleSigning {
			continue
		}
		f.Legacy++
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return false, nil, err
		}
		p, err := imageref.ReadBlob(layer, maxSignatureBlob)
		if err != nil {
			return false, nil, fmt.Errorf("layer %s: %w", l.Digest, err)
		}
		err = v.VerifyLegacyLayer(p, l.Annotations, d)
		if err == nil {
			return true, nil, nil
		}
		refusals = append(refusals, fmt.Errorf("legacy signature %s: %w", l.Digest, err))
	}
	return false, refusals, nil
}

// bundleOf reads the bundle layer of a referrer manifest; isBundle says
// whether the manifest is a bundle's (its one layer a Sigstore bundle).
func bundleOf(ctx context.Context, ref name.Digest, reg Registry) (b []byte, isBundle bool, err error) {
	img, err := reg.Image(ctx, ref)
	if err != nil {
		return nil, true, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, true, err
	}
	if len(m.Layers) == 0 || !strings.HasPrefix(string(m.Layers[0].MediaType), "application/vnd.dev.sigstore.bundle") {
		return nil, false, nil
	}
	if len(m.Layers) != 1 {
		return nil, true, fmt.Errorf("%d layers, want the bundle alone", len(m.Layers))
	}
	l, err := img.LayerByDigest(m.Layers[0].Digest)
	if err != nil {
		return nil, true, err
	}
	b, err = imageref.ReadBlob(l, maxSignatureBlob)
	return b, true, err
}
