package release

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// checkWindowsPlan refuses, before anything compiles, a Windows entry that
// cannot be built: on scratch (no Windows system files to run the .exe on)
// and in recipe mode, whose Dockerfiles describe Linux filesystems (their
// paths, RUN, the built-in runner-helper recipe). Config-free mode builds
// Windows entries (winunit.go). configFree is whether the plan is a
// config-free package; base its --base.
func checkWindowsPlan(plan *recipe.Plan, configFree bool, base string) error {
	for _, im := range plan.Images {
		for _, ip := range im.Platforms {
			if !platform.IsWindows(ip.Platform) {
				continue
			}
			return windowsRefusal(ip.Platform, im.Name, configFree, first(ip.Base, base))
		}
	}
	return nil
}

// windowsRefusal is the usage error for a Windows entry of image name on
// base, nil where config-free mode builds it.
func windowsRefusal(p v1.Platform, name string, configFree bool, base string) error {
	switch {
	case base == "scratch":
		return inputf("image %s for %s: a Windows entry needs a Windows base per Windows release (e.g. mcr.microsoft.com/windows/nanoserver:ltsc2022 for 10.0.20348); scratch has no Windows system files", name, platform.Format(p))
	case !configFree:
		return inputf("image %s for %s: Windows entries are built in config-free mode only (helperbuild push ./PKG --platforms linux/amd64,%s --base REF, a base whose index lists each Windows build); a recipe's Dockerfile describes a Linux filesystem (paths, RUN) and is not applied to Windows", name, platform.Format(p), platform.Format(p))
	}
	return nil
}
