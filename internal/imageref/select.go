package imageref

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// Platforms lists the platforms the artifact offers, in its own order,
// skipping attestation entries (unknown/unknown) and entries without a platform.
func (a *Artifact) Platforms() ([]v1.Platform, error) {
	switch {
	case a.Index != nil:
		im, err := a.Index.IndexManifest()
		if err != nil {
			return nil, err
		}
		var out []v1.Platform
		for _, d := range im.Manifests {
			if !attestspec.IsPlatformImage(d) {
				continue
			}
			out = append(out, platform.Normalize(*d.Platform))
		}
		return out, nil
	case a.Image != nil:
		cf, err := a.Image.ConfigFile()
		if err != nil {
			return nil, err
		}
		return []v1.Platform{platform.Normalize(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant, OSVersion: cf.OSVersion})}, nil
	}
	return nil, nil
}

// ImageFor returns the artifact's image for p and its manifest digest. The
// platform must be offered exactly (after normalisation), and the chosen
// image's config must agree with it.
func (a *Artifact) ImageFor(p v1.Platform) (v1.Image, v1.Hash, error) {
	offered, err := a.Platforms()
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("%s: %w", a.Ref, err)
	}
	if platform.IsWindows(p) {
		return a.windowsImageFor(p, offered)
	}
	if platform.Index(offered, p) < 0 {
		return nil, v1.Hash{}, &MissingPlatformError{Ref: a.Ref.String(), Platform: p, Offered: offered}
	}
	var img v1.Image
	digest := a.Digest
	if a.Index != nil {
		im, err := a.Index.IndexManifest()
		if err != nil {
			return nil, v1.Hash{}, err
		}
		for _, d := range im.Manifests {
			if d.Platform != nil && d.MediaType.IsImage() && platform.Equal(*d.Platform, p) {
				digest = d.Digest
				break
			}
		}
		if img, err = a.Index.Image(digest); err != nil {
			return nil, v1.Hash{}, fmt.Errorf("base %s for %s: %w", a.Ref, platform.Format(p), err)
		}
	} else {
		img = a.Image
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("base %s for %s: config: %w", a.Ref, platform.Format(p), err)
	}
	got := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
	if got.Variant == "" && p.Architecture == "arm" {
		got.Variant = p.Variant // many arm images leave the variant out of the config
	}
	if !platform.Equal(got, p) {
		return nil, v1.Hash{}, fmt.Errorf("base %s: the manifest listed for %s has a config for %s", a.Ref, platform.Format(p), platform.Format(platform.Normalize(got)))
	}
	return img, digest, nil
}

// MissingPlatformError is a base that does not offer a platform.
type MissingPlatformError struct {
	Ref      string
	Platform v1.Platform
	Offered  []v1.Platform
}

func (e *MissingPlatformError) Error() string {
	if platform.IsWindows(e.Platform) {
		return fmt.Sprintf("base %s has no %s (it offers: %s); a Windows entry needs a Windows base with that build (its index entry and config naming the os.version), e.g. nanoserver or servercore ltsc2019 for 10.0.17763, ltsc2022 for 10.0.20348",
			e.Ref, platform.Format(e.Platform), platform.FormatList(e.Offered))
	}
	return fmt.Sprintf("base %s has no %s (it offers: %s); drop the platform or use a base that has it",
		e.Ref, platform.Format(e.Platform), platform.FormatList(e.Offered))
}
