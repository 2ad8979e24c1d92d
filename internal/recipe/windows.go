package recipe

import (
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// Windows is how a recipe image's Windows entries are built: each holds
// Plan.Binaries[Binary] as C:\NAME\NAME.exe on the base its ImagePlatform
// names (the base of its Windows build), exactly as a config-free Windows
// entry; the image's Dockerfile is not applied to them.
type Windows struct {
	Binary int // index in Plan.Binaries
}

// windowsExample is the way out every Windows message shows.
const windowsExample = `windows: {bases: {"10.0.20348": mcr.microsoft.com/windows/nanoserver:ltsc2022}}`

// buildOf is the Windows build (major.minor.build) of a platform's OS
// version, "" when it names none.
func buildOf(p v1.Platform) string {
	b, _ := platform.OSBuild(p.OSVersion)
	return b
}

// windowsSpec checks an image's windows section: bases keyed by Windows
// build (each a build one of the image's platforms has, when its platforms
// are known here), none scratch, and the binary its entries hold (a
// binaries[].main; optional with one binary).
func (c *Config) windowsSpec(p string, raw rawWindows, own []v1.Platform) (*WindowsSpec, error) {
	wp := p + ".windows"
	if raw.Binary == "" && len(raw.Bases) == 0 {
		if _, given := c.lines[wp]; given {
			return nil, c.errorf(at(wp), "%s: empty; want bases (a Windows base per Windows build, e.g. %s)", wp, windowsExample)
		}
		return nil, nil
	}
	if len(raw.Bases) == 0 {
		return nil, c.errorf(at(wp+".bases", wp), "%s: missing bases: name a Windows base per Windows build the image builds, e.g. %s", wp, windowsExample)
	}
	builds := own
	if len(builds) == 0 {
		builds = c.Platforms
	}
	spec := &WindowsSpec{Bases: map[string]string{}}
	for _, k := range sortedKeys(raw.Bases) {
		kp := wp + ".bases." + k
		if b, ok := platform.OSBuild(k); !ok || b != k {
			return nil, c.errorf(at(kp), "%s.bases: %q is not a Windows build; want major.minor.build, e.g. 10.0.20348 (ltsc2022) or 10.0.17763 (ltsc2019)", wp, k)
		}
		if len(builds) > 0 && !slices.ContainsFunc(builds, func(pl v1.Platform) bool { return platform.IsWindows(pl) && buildOf(pl) == k }) {
			return nil, c.errorf(at(kp), "%s.bases: the image builds no Windows platform of build %s (its platforms: %s); add windows/amd64:%s to its platforms or drop the base", wp, k, platform.FormatList(builds), k)
		}
		ref := raw.Bases[k]
		switch strings.TrimSpace(ref) {
		case "":
			return nil, c.errorf(at(kp), "%s.bases.%s: empty image reference", wp, k)
		case "scratch":
			return nil, c.errorf(at(kp), "%s.bases.%s: scratch has no Windows system files to run the .exe on; name a Windows base of that build (nanoserver or servercore ltsc2019 for 10.0.17763, ltsc2022 for 10.0.20348)", wp, k)
		}
		if err := checkTemplate(kp, ref); err != nil {
			return nil, c.errorf(at(kp), "%v", err)
		}
		spec.Bases[k] = ref
	}
	var mains []string
	for _, b := range c.Binaries {
		mains = append(mains, b.Main)
	}
	switch spec.Binary = slices.Index(mains, raw.Binary); {
	case raw.Binary == "" && len(mains) == 1:
		spec.Binary = 0
	case raw.Binary == "":
		return nil, c.errorf(at(wp), "%s: missing binary: the recipe has %d binaries (%s); name the one each Windows entry holds as C:\\NAME\\NAME.exe, e.g. binary: %s", wp, len(mains), strings.Join(mains, ", "), mains[0])
	case spec.Binary < 0:
		return nil, c.errorf(at(wp+".binary"), "%s.binary: %q is not a binaries[].main (the recipe has: %s)", wp, raw.Binary, strings.Join(mains, ", "))
	}
	return spec, nil
}

// planWindowsBase renders the base of the Windows entry ip of image spec
// (p its path in the file): the base of its build under windows.bases.
func (c *Config) planWindowsBase(ip *ImagePlatform, spec ImageSpec, p string, vars Vars) error {
	key := platform.Format(ip.Platform)
	build := buildOf(ip.Platform)
	switch {
	case build == "":
		return errAt(c.Path, c.line(p+".platforms", "platforms", p), fmt.Sprintf("image %s: %s names no Windows build; a Windows node runs only images of its own build: write %s:10.0.20348 (or :10.0.17763, ...)", spec.Name, key, key))
	case spec.Windows == nil:
		return errAt(c.Path, c.line(p), fmt.Sprintf("image %s for %s: a Windows entry needs a Windows base for build %s: add %s under the image (its Dockerfile describes the Linux entries and is not applied to Windows ones)", spec.Name, key, build, strings.Replace(windowsExample, "10.0.20348", build, 1)))
	}
	tmpl, ok := spec.Windows.Bases[build]
	if !ok {
		return errAt(c.Path, c.line(p+".windows.bases", p+".windows"), fmt.Sprintf("image %s for %s: windows.bases has no base for build %s (it has: %s); add \"%s\": REF, a Windows base of that build", spec.Name, key, build, strings.Join(sortedKeys(spec.Windows.Bases), ", "), build))
	}
	bp := p + ".windows.bases." + build
	ref, err := c.render(bp, tmpl, vars.PlatformData(ip.Platform))
	if err != nil {
		return err
	}
	if strings.TrimSpace(ref) == "" || ref == "scratch" {
		return errAt(c.Path, c.line(bp), fmt.Sprintf("%s renders %q for %s; want a Windows base image", bp, ref, key))
	}
	ip.Base = ref
	return nil
}

// windowsOutput is the file name of a binary for a Windows platform whose
// output template rendered name: name plus -OSVERSION (before a .exe), so
// each Windows entry compiles its own binary, as in config-free mode.
func windowsOutput(name string, p v1.Platform) string {
	if !platform.IsWindows(p) || p.OSVersion == "" {
		return name
	}
	if base, ok := strings.CutSuffix(name, ".exe"); ok {
		return base + "-" + p.OSVersion + ".exe"
	}
	return name + "-" + p.OSVersion
}

// keepWindowsOutputs leaves on each Windows platform of plan only the
// outputs of the binaries its Windows entries hold ("" for the others,
// which are not compiled for it): a Windows entry holds one binary.
func keepWindowsOutputs(plan *Plan) {
	for k := range plan.Platforms {
		pl := &plan.Platforms[k]
		if !platform.IsWindows(pl.Platform) {
			continue
		}
		needed := make([]bool, len(pl.Outputs))
		for _, im := range plan.Images {
			if im.Windows != nil && platform.Index(Values(im.Platforms), pl.Platform) >= 0 {
				needed[im.Windows.Binary] = true
			}
		}
		for b := range pl.Outputs {
			if !needed[b] {
				pl.Outputs[b] = ""
			}
		}
	}
}
