package recipe

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// Selection narrows a plan to some images and platforms.
type Selection struct {
	Images    []string      // image names; empty means all. An unknown name is an error.
	Platforms []v1.Platform // replaces the top-level platforms; nil means the config's
	// Tags are index tags added to every selected image, after its own
	// (the command's --tag). A tag that is not valid, or that an image
	// also renders as a platform tag, is an error.
	Tags []string
	// Partial leaves out an image that builds none of the selected
	// platforms instead of failing (push --by-digest: one CI job builds the
	// images of its platforms, merge joins them).
	Partial bool
}

// Plan is a config with every template rendered and every value checked,
// ready for cross-compiling and assembling images.
type Plan struct {
	Dir       string     // absolute directory of the config file: module root, base of mains
	Platforms []Platform // union of the selected images' platforms, in platform-list order
	Flags     []string   // go build flags, rendered
	Ldflags   string     // rendered
	Env       []string   // KEY=VALUE, rendered
	Binaries  []Binary
	Images    []Image

	// pkg is the config-free package whose platforms its base decides,
	// until ForBasePlatforms is given them; nil otherwise.
	pkg *Package
}

// Platform is one platform the plan compiles for: the platform, normalised
// when it was parsed, and what is rendered for it.
type Platform struct {
	Platform v1.Platform
	// Outputs[k] is the plain file name of Plan.Binaries[k]; on a Windows
	// platform, "" for a binary none of its Windows entries holds (not
	// compiled for it).
	Outputs []string
}

// Binary is one Go main package; its output names are in Plan.Platforms.
type Binary struct {
	Main string // as written, relative to Plan.Dir ("./apps/gitlab-runner-helper")
}

// Values returns the platforms of ps, in order.
func Values[P interface{ value() v1.Platform }](ps []P) []v1.Platform {
	out := make([]v1.Platform, len(ps))
	for i, p := range ps {
		out[i] = p.value()
	}
	return out
}

func (p Platform) value() v1.Platform      { return p.Platform }
func (p ImagePlatform) value() v1.Platform { return p.Platform }

// Image is one image to assemble.
type Image struct {
	Name           string
	Dockerfile     string // absolute path, or "" when the built-in recipe is used
	DockerfileName string // for messages: the path relative to Plan.Dir, or "built-in runner-helper/Dockerfile"
	DockerfileData []byte // the built-in recipe's bytes; nil when Dockerfile is set
	Args           map[string]string
	Contexts       map[string]string // name -> absolute directory, or BinariesContext
	Tags           []string          // index tags, rendered, unique, in order
	Platforms      []ImagePlatform
	Contract       string
	// Windows is set on a recipe image with Windows platforms: their
	// entries hold one binary on their ImagePlatform.Base, the Dockerfile
	// not applied. Nil in config-free mode (its one binary).
	Windows *Windows
}

// ImagePlatform is one platform an image is built for.
type ImagePlatform struct {
	Platform v1.Platform
	Base     string   // FROM image override; "" keeps the Dockerfile's. A recipe's Windows entry: its base
	Tags     []string // alias tags of this platform's manifest
}

// Plan renders the config for vars and sel. It checks the file system (the
// dockerfiles and context directories exist) but compiles nothing.
func (c *Config) Plan(vars Vars, sel Selection) (*Plan, error) {
	if vars.Date != "" {
		d, err := time.Parse(time.RFC3339, vars.Date)
		if err != nil || d.Location() != time.UTC {
			return nil, fmt.Errorf("build date %q: want RFC 3339 in UTC, e.g. 2025-03-20T10:11:12Z", vars.Date)
		}
	}
	picked, err := c.pickImages(sel.Images)
	if err != nil {
		return nil, err
	}
	for _, t := range sel.Tags {
		if err := imageref.CheckTag(t); err != nil {
			return nil, fmt.Errorf("extra tag %q: %w", t, err)
		}
	}
	list, err := c.selectedPlatforms(sel.Platforms)
	if err != nil {
		return nil, err
	}
	var imagePlatforms [][]v1.Platform
	var union []v1.Platform
	building := picked[:0:0]
	var skipped []error // Partial: images left out
	for _, i := range picked {
		ps, err := c.imagePlatforms(i, list, len(sel.Platforms) > 0)
		if err != nil {
			var none errBuildsNone
			if sel.Partial && errors.As(err, &none) {
				skipped = append(skipped, err)
				continue
			}
			return nil, err
		}
		building = append(building, i)
		imagePlatforms = append(imagePlatforms, ps)
		for _, p := range ps {
			if platform.Index(union, p) < 0 {
				union = append(union, p)
			}
		}
	}
	if len(c.Images) == 0 {
		union = slices.Clone(list)
	}
	if len(building) == 0 && len(skipped) > 0 {
		return nil, skipped[0]
	}
	union = inListOrder(union, list)
	if len(union) == 0 {
		return nil, errAt(c.Path, c.line("platforms"), "no platforms: list them under platforms or select some")
	}
	if len(c.Images) > 0 && len(sel.Platforms) > 0 {
		for _, p := range list {
			if platform.Index(union, p) < 0 {
				return nil, fmt.Errorf("platform %s: none of the selected images (%s) builds it", platform.Format(p), strings.Join(c.names(picked), ", "))
			}
		}
	}
	plan := &Plan{Dir: c.Dir, Platforms: make([]Platform, len(union))}
	for k, p := range union {
		plan.Platforms[k].Platform = p
	}
	if err := c.planBuild(plan, vars); err != nil {
		return nil, err
	}
	if err := c.planBinaries(plan, vars); err != nil {
		return nil, err
	}
	for k, i := range building {
		img, err := c.planImage(i, imagePlatforms[k], vars, sel.Tags)
		if err != nil {
			return nil, err
		}
		plan.Images = append(plan.Images, img)
	}
	keepWindowsOutputs(plan)
	return plan, nil
}

// selectedPlatforms is the platforms selected (each once, normalised), else
// the config's.
func (c *Config) selectedPlatforms(selected []v1.Platform) ([]v1.Platform, error) {
	if len(selected) == 0 {
		return c.Platforms, nil
	}
	var list []v1.Platform
	for _, p := range selected {
		if _, err := platform.GoEnv(p); err != nil {
			return nil, fmt.Errorf("selected platforms: %w", err)
		}
		if platform.Index(list, p) < 0 {
			list = append(list, platform.Normalize(p))
		}
	}
	return list, nil
}

// pickImages returns the indices of the selected images in config order.
func (c *Config) pickImages(names []string) ([]int, error) {
	all := c.names(nil)
	if len(names) == 0 {
		out := make([]int, len(c.Images))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	var out []int
	for _, n := range names {
		i := slices.Index(all, n)
		if i < 0 {
			known := strings.Join(all, ", ")
			if known == "" {
				known = "none"
			}
			return nil, fmt.Errorf("unknown image %q (%s has: %s)", n, c.Path, known)
		}
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out, nil
}

// names returns the names of the images at indices, or of all images.
func (c *Config) names(indices []int) []string {
	if indices == nil {
		indices = make([]int, len(c.Images))
		for i := range indices {
			indices[i] = i
		}
	}
	out := make([]string, len(indices))
	for k, i := range indices {
		out[k] = c.Images[i].Name
	}
	return out
}

// imagePlatforms returns the platforms image i builds given the platform
// list in force (the selection's or the top-level one).
func (c *Config) imagePlatforms(i int, list []v1.Platform, selected bool) ([]v1.Platform, error) {
	img := c.Images[i]
	p := index("images", i)
	if len(img.Platforms) == 0 {
		if len(list) == 0 {
			return nil, errAt(c.Path, c.line(p), fmt.Sprintf("image %s: no platforms: list them under platforms (top level or the image's) or select some", img.Name))
		}
		return slices.Clone(list), nil
	}
	if !selected {
		return slices.Clone(img.Platforms), nil
	}
	var out []v1.Platform
	for _, pl := range list {
		if platform.Index(img.Platforms, pl) >= 0 {
			out = append(out, pl)
		}
	}
	if len(out) == 0 {
		return nil, errBuildsNone{errAt(c.Path, c.line(p+".platforms"), fmt.Sprintf("image %s builds none of the selected platforms %s (its platforms: %s)", img.Name, platform.FormatList(list), platform.FormatList(img.Platforms)))}
	}
	return out, nil
}

// errBuildsNone is an image that builds none of the selected platforms.
type errBuildsNone struct{ error }

func (e errBuildsNone) Unwrap() error { return e.error }

func (c *Config) planBuild(plan *Plan, vars Vars) error {
	data := vars.Data()
	for i, f := range c.Build.Flags {
		s, err := c.render(index("build.flags", i), f, data)
		if err != nil {
			return err
		}
		plan.Flags = append(plan.Flags, s)
	}
	var err error
	if plan.Ldflags, err = c.render("build.ldflags", c.Build.Ldflags, data); err != nil {
		return err
	}
	for i, kv := range c.Build.Env {
		s, err := c.render(index("build.env", i), kv, data)
		if err != nil {
			return err
		}
		plan.Env = append(plan.Env, s)
	}
	return nil
}

// planBinaries renders every output name for every platform; all names land
// in one directory, so two equal names are an error.
func (c *Config) planBinaries(plan *Plan, vars Vars) error {
	type owner struct {
		binary   int
		platform v1.Platform
	}
	seen := map[string]owner{}
	for i, b := range c.Binaries {
		p := index("binaries", i) + ".output"
		for k := range plan.Platforms {
			pl := &plan.Platforms[k]
			name, err := c.render(p, b.Output, vars.PlatformData(pl.Platform))
			if err != nil {
				return err
			}
			if name != "" {
				name = windowsOutput(name, pl.Platform)
			}
			key := platform.Format(pl.Platform)
			if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
				return errAt(c.Path, c.line(p), fmt.Sprintf("%s renders %q for %s; want a plain file name (no / or ..)", p, name, key))
			}
			if prev, dup := seen[name]; dup {
				if prev.binary == i {
					return errAt(c.Path, c.line(p), fmt.Sprintf("%s renders %q for both %s and %s; add {{.Variant}} to tell them apart", p, name, platform.Format(prev.platform), key))
				}
				return errAt(c.Path, c.line(p), fmt.Sprintf("%s renders %q for %s, the same name as binaries[%d] for %s", p, name, key, prev.binary, platform.Format(prev.platform)))
			}
			seen[name] = owner{binary: i, platform: pl.Platform}
			pl.Outputs = append(pl.Outputs, name)
		}
		plan.Binaries = append(plan.Binaries, Binary{Main: b.Main})
	}
	return nil
}

// render renders the template at path, reporting errors at its line.
func (c *Config) render(path, text string, data map[string]any) (string, error) {
	s, err := Render(path, text, data)
	if err != nil {
		return "", errAt(c.Path, c.line(path), err.Error())
	}
	return s, nil
}

// inListOrder orders platforms as they appear in list; any not in list keep
// their order after those that are.
func inListOrder(platforms, list []v1.Platform) []v1.Platform {
	out := make([]v1.Platform, 0, len(platforms))
	for _, p := range list {
		if platform.Index(platforms, p) >= 0 {
			out = append(out, p)
		}
	}
	for _, p := range platforms {
		if platform.Index(list, p) < 0 {
			out = append(out, p)
		}
	}
	return out
}
