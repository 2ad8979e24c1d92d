package imageref

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// windowsImageFor is ImageFor for a Windows platform: the one entry whose
// os.version has p's build (any build when p names none and the base offers
// one), whose config is windows of p's architecture with that os.version.
// A base without the build is a *MissingPlatformError; a base offering
// several builds for a p without one is an error asking to name one.
func (a *Artifact) windowsImageFor(p v1.Platform, offered []v1.Platform) (v1.Image, v1.Hash, error) {
	var matches []v1.Platform
	for _, o := range offered {
		if platform.Satisfies(o, p) {
			matches = append(matches, o)
		}
	}
	switch {
	case len(matches) == 0:
		return nil, v1.Hash{}, &MissingPlatformError{Ref: a.Ref.String(), Platform: p, Offered: offered}
	case len(matches) > 1:
		return nil, v1.Hash{}, fmt.Errorf("base %s offers %s for several Windows builds (%s); name one per entry, e.g. %s",
			a.Ref, platform.Format(p), platform.FormatList(matches), platform.Format(v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant, OSVersion: buildOf(matches[0].OSVersion)}))
	}
	img, digest := a.Image, a.Digest
	if a.Index != nil {
		im, err := a.Index.IndexManifest()
		if err != nil {
			return nil, v1.Hash{}, err
		}
		for _, d := range im.Manifests {
			if attestspec.IsPlatformImage(d) && platform.Equal(*d.Platform, matches[0]) {
				digest = d.Digest
				break
			}
		}
		if img, err = a.Index.Image(digest); err != nil {
			return nil, v1.Hash{}, fmt.Errorf("base %s for %s: %w", a.Ref, platform.Format(p), err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("base %s for %s: config: %w", a.Ref, platform.Format(p), err)
	}
	got := platform.Normalize(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant, OSVersion: cf.OSVersion})
	if got.OS != "windows" || cf.OSVersion == "" || !platform.Satisfies(got, p) || (a.Index != nil && !platform.Satisfies(got, v1.Platform{OS: "windows", Architecture: matches[0].Architecture, Variant: matches[0].Variant, OSVersion: buildOf(matches[0].OSVersion)})) {
		return nil, v1.Hash{}, fmt.Errorf("base %s: the manifest listed for %s has a config for %s; its os.version decides which Windows nodes run the entry, so both must name one build",
			a.Ref, platform.Format(matches[0]), describeConfig(got))
	}
	return img, digest, nil
}

// describeConfig names a config's platform, saying when a Windows one has
// no os.version.
func describeConfig(p v1.Platform) string {
	s := platform.Format(p)
	if p.OS == "windows" && p.OSVersion == "" {
		s += " without os.version"
	}
	return s
}

// buildOf is major.minor.build of a Windows version, else v unchanged.
func buildOf(v string) string {
	if b, ok := platform.OSBuild(v); ok {
		return b
	}
	return strings.TrimSpace(v)
}
