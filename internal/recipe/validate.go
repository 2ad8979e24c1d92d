package recipe

import (
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/dockerfiles"
	"github.com/helperbuild/helperbuild/internal/platform"
)

var (
	// imageNameRE is a repository path as the distribution spec allows it:
	// lowercase components separated by "/".
	imageNameRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
	// envKeyRE is a portable environment variable name.
	envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// fill checks raw and copies it into c.
func (c *Config) fill(raw *rawConfig) error {
	var err error
	if c.Platforms, err = c.platformList(raw.Platforms, "platforms"); err != nil {
		return err
	}
	if err := c.fillBuild(raw.Build); err != nil {
		return err
	}
	if len(raw.Binaries) == 0 {
		return c.errorf(at("binaries"), "binaries: want at least one binary (main and output)")
	}
	for i, b := range raw.Binaries {
		p := index("binaries", i)
		if b.Main == "" {
			return c.errorf(at(p+".main", p), "%s: missing main (the Go main package, e.g. ./apps/gitlab-runner-helper)", p)
		}
		if err := checkMain(b.Main); err != nil {
			return c.errorf(at(p+".main"), "%s.main: %v", p, err)
		}
		if b.Output == "" {
			return c.errorf(at(p+".output", p), "%s: missing output (the file name, e.g. gitlab-runner-helper.{{.OS}}-{{.Arch}})", p)
		}
		if err := checkTemplate(p+".output", b.Output); err != nil {
			return c.errorf(at(p+".output"), "%v", err)
		}
		c.Binaries = append(c.Binaries, BinarySpec{Main: b.Main, Output: b.Output})
	}
	names := map[string]int{}
	for i, raw := range raw.Images {
		img, err := c.image(i, raw)
		if err != nil {
			return err
		}
		if first, dup := names[img.Name]; dup {
			return c.errorf(at(index("images", i)+".name"), "images[%d].name: %q is already the name of images[%d] (line %d)", i, img.Name, first, c.line(index("images", first)+".name"))
		}
		names[img.Name] = i
		c.Images = append(c.Images, img)
	}
	return nil
}

func (c *Config) fillBuild(b rawBuild) error {
	for i, f := range b.Flags {
		p := index("build.flags", i)
		if !strings.HasPrefix(f, "-") {
			return c.errorf(at(p), "%s: %q is not a flag (want e.g. -trimpath)", p, f)
		}
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		switch name {
		case "o":
			return c.errorf(at(p), "%s: %q: output names come from binaries[].output", p, f)
		case "ldflags":
			return c.errorf(at(p), "%s: %q: use build.ldflags", p, f)
		}
		if err := checkTemplate(p, f); err != nil {
			return c.errorf(at(p), "%v", err)
		}
	}
	if err := checkTemplate("build.ldflags", b.Ldflags); err != nil {
		return c.errorf(at("build.ldflags"), "%v", err)
	}
	for i, kv := range b.Env {
		p := index("build.env", i)
		key, _, ok := strings.Cut(kv, "=")
		if !ok || !envKeyRE.MatchString(key) {
			return c.errorf(at(p), "%s: %q: want KEY=VALUE", p, kv)
		}
		if platform.IsTargetVar(key) {
			return c.errorf(at(p), "%s: %s is set per platform; choose platforms instead", p, key)
		}
		if err := checkTemplate(p, kv); err != nil {
			return c.errorf(at(p), "%v", err)
		}
	}
	c.Build = BuildSpec{Flags: b.Flags, Ldflags: b.Ldflags, Env: b.Env}
	return nil
}

func (c *Config) image(i int, raw rawImage) (ImageSpec, error) {
	p := index("images", i)
	img := ImageSpec{
		Name: raw.Name, Dockerfile: raw.Dockerfile, Args: raw.Args, Contexts: raw.Contexts,
		Tags: raw.Tags, PlatformTags: raw.PlatformTags, Contract: raw.Contract,
	}
	if img.Name == "" {
		return img, c.errorf(at(p+".name", p), "%s: missing name", p)
	}
	if !imageNameRE.MatchString(img.Name) {
		return img, c.errorf(at(p+".name"), "%s.name: %q is not a repository path (lowercase letters, digits and . _ - between them, / between components)", p, img.Name)
	}
	if img.Dockerfile == "" {
		if _, _, ok := dockerfiles.Default(img.Name); !ok {
			return img, c.errorf(at(p), "%s: missing dockerfile (only gitlab-runner-helper and gitlab-runner have a built-in one)", p)
		}
		for _, need := range dockerfiles.RequiredContexts(img.Name) {
			if _, ok := img.Contexts[need]; !ok {
				return img, c.errorf(at(p+".contexts", p), "%s: the built-in Dockerfile of %s copies from context %q; add it to contexts", p, img.Name, need)
			}
		}
	} else if err := checkInside(img.Dockerfile); err != nil {
		return img, c.errorf(at(p+".dockerfile"), "%s.dockerfile: %v", p, err)
	}
	for _, k := range sortedKeys(img.Args) {
		if err := checkTemplate(p+".args."+k, img.Args[k]); err != nil {
			return img, c.errorf(at(p+".args."+k), "%v", err)
		}
	}
	for _, k := range sortedKeys(img.Contexts) {
		if err := checkContext(img.Contexts[k]); err != nil {
			return img, c.errorf(at(p+".contexts."+k, p+".contexts"), "%s.contexts.%s: %v", p, k, err)
		}
	}
	for j, t := range img.Tags {
		if err := checkTemplate(index(p+".tags", j), t); err != nil {
			return img, c.errorf(at(index(p+".tags", j)), "%v", err)
		}
	}
	for j, t := range img.PlatformTags {
		if err := checkTemplate(index(p+".platform_tags", j), t); err != nil {
			return img, c.errorf(at(index(p+".platform_tags", j)), "%v", err)
		}
	}
	var err error
	if img.Platforms, err = c.platformList(raw.Platforms, p+".platforms"); err != nil {
		return img, err
	}
	if len(c.Platforms) > 0 {
		for j, pl := range img.Platforms {
			if platform.Index(c.Platforms, pl) < 0 {
				return img, c.errorf(at(index(p+".platforms", j)), "%s.platforms: %s is not in the top-level platforms (%s)", p, platform.Format(pl), platform.FormatList(c.Platforms))
			}
		}
	}
	if img.Base, err = c.baseMap(p, raw.Base, img.Platforms); err != nil {
		return img, err
	}
	if img.Windows, err = c.windowsSpec(p, raw.Windows, img.Platforms); err != nil {
		return img, err
	}
	switch img.Contract {
	case "", "helper", "runner":
	default:
		return img, c.errorf(at(p+".contract"), "%s.contract: %q is not a contract (want helper or runner)", p, img.Contract)
	}
	return img, nil
}

// baseMap normalises the platform keys of an image's base overrides; each
// must be a platform the image builds.
func (c *Config) baseMap(p string, raw map[string]string, own []v1.Platform) (map[string]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	builds := own
	if len(builds) == 0 {
		builds = c.Platforms
	}
	out := map[string]string{}
	for _, k := range sortedKeys(raw) {
		kp := p + ".base." + k
		pl, err := platform.Parse(k)
		if err != nil {
			return nil, c.errorf(at(kp), "%s.base: %v", p, err)
		}
		key := platform.Format(pl)
		if platform.IsWindows(pl) {
			return nil, c.errorf(at(kp), "%s.base: %s is a Windows platform: its base goes under windows.bases by build (windows: {bases: {\"%s\": REF}}); base: overrides the Dockerfile's FROM, which Windows entries do not apply", p, key, cmp.Or(buildOf(pl), "10.0.20348"))
		}
		if _, dup := out[key]; dup {
			return nil, c.errorf(at(kp), "%s.base: %q is %s, which has another entry", p, k, key)
		}
		if len(builds) > 0 && platform.Index(builds, pl) < 0 {
			return nil, c.errorf(at(kp), "%s.base: %s is not a platform of this image (%s)", p, key, platform.FormatList(builds))
		}
		if raw[k] == "" {
			return nil, c.errorf(at(kp), "%s.base.%s: empty image reference", p, k)
		}
		if err := checkTemplate(kp, raw[k]); err != nil {
			return nil, c.errorf(at(kp), "%v", err)
		}
		out[key] = raw[k]
		c.lines[p+".base."+key] = c.line(kp)
	}
	return out, nil
}

// platformList parses the platform list at path; duplicates are errors.
func (c *Config) platformList(list []string, path string) ([]v1.Platform, error) {
	var out []v1.Platform
	for i, s := range list {
		p := index(path, i)
		pl, err := platform.Parse(s)
		if err != nil {
			return nil, c.errorf(at(p, path), "%s: %v", path, err)
		}
		if j := platform.Index(out, pl); j >= 0 {
			return nil, c.errorf(at(p, path), "%s: %s is listed twice (also at line %d)", path, platform.Format(pl), c.line(index(path, j)))
		}
		out = append(out, pl)
	}
	return out, nil
}

// checkMain accepts a package path relative to the config directory that
// stays inside it ("./apps/x", "."), or an import path.
func checkMain(main string) error {
	if filepath.IsAbs(main) || path.IsAbs(main) {
		return fmt.Errorf("%q is absolute; give a package relative to the config file, e.g. ./apps/gitlab-runner-helper", main)
	}
	if main == "." || main == ".." || strings.HasPrefix(main, "./") || strings.HasPrefix(main, "../") {
		if rel := path.Clean(main); rel != "." && !filepath.IsLocal(filepath.FromSlash(rel)) {
			return fmt.Errorf("%q leaves the config file's directory", main)
		}
	}
	return nil
}

// checkInside accepts a relative path that stays inside the config directory.
func checkInside(p string) error {
	if filepath.IsAbs(p) || path.IsAbs(p) {
		return fmt.Errorf("%q is absolute; give a path relative to the config file", p)
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Errorf("%q leaves the config file's directory", p)
	}
	return nil
}

// checkContext accepts BinariesContext or a local directory path.
func checkContext(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("empty; want a directory or %q", BinariesContext)
	case v == BinariesContext:
		return nil
	case strings.Contains(v, "://") || strings.HasSuffix(v, ":"):
		return fmt.Errorf("%q: only local directories and %q are supported", v, BinariesContext)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
