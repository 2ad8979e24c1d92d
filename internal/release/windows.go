package release

import (
	"cmp"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// checkWindowsPlan refuses, before anything compiles, a Windows entry that
// cannot be built: on scratch (no Windows system files to run the .exe on)
// or with no base. Config-free mode takes its --base; a recipe names a base
// per Windows build (windows.bases, which internal/recipe checks and puts
// on the entry). Both build Windows entries alike (winunit.go); a recipe's
// Dockerfile is not applied to them. configFree is whether the plan is a
// config-free package; base its --base.
func checkWindowsPlan(plan *recipe.Plan, configFree bool, base string) error {
	for _, im := range plan.Images {
		for _, ip := range im.Platforms {
			if !platform.IsWindows(ip.Platform) {
				continue
			}
			if err := windowsRefusal(ip.Platform, im.Name, configFree, cmp.Or(ip.Base, base)); err != nil {
				return err
			}
		}
	}
	return nil
}

// windowsRefusal is the usage error for a Windows entry of image name on
// base, nil where it can be built.
func windowsRefusal(p v1.Platform, name string, configFree bool, base string) error {
	way := "--base REF, a base whose index lists each Windows build"
	if !configFree {
		way = `windows: {bases: {"10.0.20348": REF}} under the image in helperbuild.yaml, a base per Windows build`
	}
	switch base {
	case "scratch":
		return inputf("image %s for %s: a Windows entry needs a Windows base per Windows release (e.g. mcr.microsoft.com/windows/nanoserver:ltsc2022 for 10.0.20348); scratch has no Windows system files", name, platform.Format(p))
	case "":
		return inputf("image %s for %s: a Windows entry needs a Windows base: give %s", name, platform.Format(p), way)
	}
	return nil
}
