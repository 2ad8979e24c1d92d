package recipe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/dockerfiles"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// planImage renders image i for the platforms it builds; extraTags are
// index tags it gets after its own.
func (c *Config) planImage(i int, platforms []v1.Platform, vars Vars, extraTags []string) (Image, error) {
	spec := c.Images[i]
	p := index("images", i)
	img := Image{Name: spec.Name, Platforms: make([]ImagePlatform, len(platforms)), Contract: spec.Contract}
	for k, pl := range platforms {
		img.Platforms[k].Platform = pl
	}
	if err := c.planDockerfile(&img, spec, p); err != nil {
		return img, err
	}
	data := vars.Data()
	img.Args = map[string]string{}
	for _, k := range sortedKeys(spec.Args) {
		v, err := c.render(p+".args."+k, spec.Args[k], data)
		if err != nil {
			return img, err
		}
		img.Args[k] = v
	}
	img.Contexts = map[string]string{}
	for _, k := range sortedKeys(spec.Contexts) {
		dir, err := c.contextDir(spec.Contexts[k])
		if err != nil {
			return img, errAt(c.Path, c.line(p+".contexts."+k), fmt.Sprintf("%s.contexts.%s: %v", p, k, err))
		}
		img.Contexts[k] = dir
	}
	for j, t := range spec.Tags {
		tp := index(p+".tags", j)
		tag, err := c.render(tp, t, data)
		if err != nil {
			return img, err
		}
		if err := c.checkTag(tp, t, spec.Name, tag, ""); err != nil {
			return img, err
		}
		if !slices.Contains(img.Tags, tag) {
			img.Tags = append(img.Tags, tag)
		}
	}
	for _, tag := range extraTags {
		if !slices.Contains(img.Tags, tag) {
			img.Tags = append(img.Tags, tag)
		}
	}
	if err := c.planPlatformTags(&img, spec, p, vars); err != nil {
		return img, err
	}
	for k := range img.Platforms {
		ip := &img.Platforms[k]
		key := platform.Format(ip.Platform)
		if platform.IsWindows(ip.Platform) {
			if err := c.planWindowsBase(ip, spec, p, vars); err != nil {
				return img, err
			}
			img.Windows = &Windows{Binary: spec.Windows.Binary}
			continue
		}
		base, ok := spec.Base[key]
		if !ok {
			if img.DockerfileData != nil && img.Args["BASE_IMAGE"] == "" {
				return img, errAt(c.Path, c.line(p+".args", p), fmt.Sprintf("image %s: the built-in Dockerfile needs args.BASE_IMAGE (a base image, or scratch) or a base entry for %s", spec.Name, key))
			}
			continue
		}
		bp := p + ".base." + key
		ref, err := c.render(bp, base, vars.PlatformData(ip.Platform))
		if err != nil {
			return img, err
		}
		if ref == "" {
			return img, errAt(c.Path, c.line(bp), fmt.Sprintf("%s renders an empty image reference", bp))
		}
		ip.Base = ref
	}
	return img, nil
}

// planDockerfile resolves the image's Dockerfile: the built-in recipe, or a
// regular file inside the config directory (symbolic links included).
func (c *Config) planDockerfile(img *Image, spec ImageSpec, p string) error {
	if spec.Dockerfile == "" {
		path, data, _ := dockerfiles.Default(spec.Name)
		img.DockerfileName = "built-in " + path
		img.DockerfileData = data
		return nil
	}
	abs := filepath.Join(c.Dir, filepath.FromSlash(spec.Dockerfile))
	fail := func(err error) error {
		return errAt(c.Path, c.line(p+".dockerfile"), fmt.Sprintf("%s.dockerfile: %v", p, err))
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fail(err)
	}
	root, err := filepath.EvalSymlinks(c.Dir)
	if err != nil {
		return fail(err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(rel) {
		return fail(fmt.Errorf("%s resolves to %s, outside %s", spec.Dockerfile, real, root))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fail(err)
	}
	if !fi.Mode().IsRegular() {
		return fail(fmt.Errorf("%s is not a regular file", abs))
	}
	img.Dockerfile = abs
	img.DockerfileName = spec.Dockerfile
	return nil
}

// contextDir resolves a context value to BinariesContext or an existing
// absolute directory inside the config's directory: a recipe must not be
// able to copy the host's /etc or ~/.docker into an image.
func (c *Config) contextDir(v string) (string, error) {
	if v == BinariesContext {
		return v, nil
	}
	dir := filepath.FromSlash(v)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.Dir, dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(c.Dir)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || (rel != "." && !filepath.IsLocal(rel)) {
		return "", fmt.Errorf("%s resolves to %s, outside %s; contexts must be inside the recipe's directory", v, real, root)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return filepath.Clean(dir), nil
}

// planPlatformTags renders the alias tags of every platform. A platform tag
// may equal neither an index tag nor another platform's tag.
func (c *Config) planPlatformTags(img *Image, spec ImageSpec, p string, vars Vars) error {
	if len(spec.PlatformTags) == 0 {
		return nil
	}
	owner := map[string]string{}
	for k := range img.Platforms {
		ip := &img.Platforms[k]
		key := platform.Format(ip.Platform)
		data := vars.PlatformData(ip.Platform)
		for j, t := range spec.PlatformTags {
			tp := index(p+".platform_tags", j)
			tag, err := c.render(tp, t, data)
			if err != nil {
				return err
			}
			if err := c.checkTag(tp, t, spec.Name, tag, key); err != nil {
				return err
			}
			if slices.Contains(img.Tags, tag) {
				return errAt(c.Path, c.line(tp), fmt.Sprintf("image %s: platform tag %q of %s is also an index tag", spec.Name, tag, key))
			}
			if prev, dup := owner[tag]; dup && prev != key {
				return errAt(c.Path, c.line(tp), fmt.Sprintf("image %s: platform tag %q is rendered for both %s and %s; add {{.Variant}} or narrow the platforms", spec.Name, tag, prev, key))
			}
			if _, dup := owner[tag]; !dup {
				owner[tag] = key
				ip.Tags = append(ip.Tags, tag)
			}
		}
	}
	return nil
}

// checkTag reports a rendered tag that the registry API would refuse:
// the offending character and a template that removes it.
func (c *Config) checkTag(path, text, image, tag, platformKey string) error {
	err := imageref.CheckTag(tag)
	if err == nil {
		return nil
	}
	suffix := ""
	if platformKey != "" {
		suffix = " for " + platformKey
	}
	msg := fmt.Sprintf("image %s: %s renders tag %q%s: %v", image, path, tag, suffix, err)
	var ce *imageref.TagCharError
	if errors.As(err, &ce) {
		fn := fmt.Sprintf("replace %q %q", string(ce.Char), "-")
		if ce.First {
			fn = fmt.Sprintf("trimPrefix %q", string(ce.Char))
		}
		msg += "; use the " + strings.Fields(fn)[0] + " template function: " + withPipe(text, fn)
	}
	return errAt(c.Path, c.line(path), msg)
}

// withPipe suggests text with fn applied: to its one action when it has
// exactly one ({{.Version}} -> {{.Version | fn}}), else to .Version.
func withPipe(text, fn string) string {
	open, close := strings.Index(text, "{{"), strings.LastIndex(text, "}}")
	if open >= 0 && close > open && strings.Count(text, "{{") == 1 {
		action := strings.TrimSpace(strings.Trim(text[open+2:close], "-"))
		return text[:open] + "{{" + action + " | " + fn + "}}" + text[close+2:]
	}
	return "{{.Version | " + fn + "}}"
}
