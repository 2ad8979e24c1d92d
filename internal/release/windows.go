package release

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// checkWindowsPlan refuses, before anything compiles, a plan with a Windows
// entry: on scratch (no Windows system files to run the .exe on) with the
// way out, and otherwise because assembling Windows entries (Windows layer
// format, per-release bases, foreign base layers) is not built yet. Parsing
// Windows platforms already works, so the refusal names what is missing
// instead of claiming Go cannot build them.
func checkWindowsPlan(plan *recipe.Plan, configFreeBase string) error {
	for _, im := range plan.Images {
		for _, ip := range im.Platforms {
			if !platform.IsWindows(ip.Platform) {
				continue
			}
			return windowsRefusal(ip.Platform, im.Name, first(ip.Base, configFreeBase))
		}
	}
	return nil
}

// windowsRefusal is the usage error for a Windows entry of image name on base.
func windowsRefusal(p v1.Platform, name, base string) error {
	if base == "scratch" {
		return inputf("image %s for %s: a Windows entry needs a Windows base per Windows release (e.g. mcr.microsoft.com/windows/nanoserver:ltsc2022 for 10.0.20348); scratch has no Windows system files", name, platform.Format(p))
	}
	return inputf("image %s for %s: helperbuild does not assemble Windows entries yet (the Windows layer format and foreign base layers are not written); build the Linux platforms here and the Windows images with GitLab's or ko's tooling", name, platform.Format(p))
}
