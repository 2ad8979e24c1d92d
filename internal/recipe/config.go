package recipe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"gopkg.in/yaml.v3"
)

// BinariesContext is the context value that stands for the directory of
// cross-compiled outputs: contexts: {binary_dir: "binaries:"}.
const BinariesContext = "binaries:"

// Config is a parsed and statically checked helperbuild.yaml. Template
// fields hold their unrendered text; Plan renders them.
type Config struct {
	Path      string        // the name given to Parse or Load, used in messages
	Dir       string        // absolute directory of Path
	Platforms []v1.Platform // top-level platforms, normalised, in file order
	Build     BuildSpec
	Binaries  []BinarySpec
	Images    []ImageSpec

	lines map[string]int // line of every value, by path ("images[0].tags[1]")
}

// BuildSpec is the build section: go build flags, -ldflags and extra
// environment (KEY=VALUE), all templates.
type BuildSpec struct {
	Flags   []string
	Ldflags string
	Env     []string
}

// BinarySpec is one Go main package and the template of its output file name.
type BinarySpec struct {
	Main   string
	Output string
}

// ImageSpec is one image of the config.
type ImageSpec struct {
	Name         string
	Dockerfile   string            // relative to Config.Dir; "" for the built-in recipe
	Args         map[string]string // build arguments, values are templates
	Contexts     map[string]string // name -> directory relative to Config.Dir, or BinariesContext
	Tags         []string          // index tags, templates
	PlatformTags []string          // per-platform alias tags, templates
	Platforms    []v1.Platform     // nil: the top-level list
	Base         map[string]string // platform ("linux/arm/v7") -> FROM image override, templates
	Contract     string            // "", "helper" or "runner"
	Windows      *WindowsSpec      // nil: the image has no Windows entries
}

// WindowsSpec is an image's windows section: how its Windows entries are
// built. The Dockerfile describes Linux entries and is not applied to
// them; each is binary Binaries[Binary] on the base of its Windows build.
type WindowsSpec struct {
	Binary int               // index in Config.Binaries
	Bases  map[string]string // Windows build ("10.0.20348") -> base reference, templates
}

// rawConfig and its parts mirror the file; field order gives the order of
// "known:" keys in messages.
type rawConfig struct {
	Platforms []string    `yaml:"platforms"`
	Build     rawBuild    `yaml:"build"`
	Binaries  []rawBinary `yaml:"binaries"`
	Images    []rawImage  `yaml:"images"`
}

type rawBuild struct {
	Flags   []string `yaml:"flags"`
	Ldflags string   `yaml:"ldflags"`
	Env     []string `yaml:"env"`
}

type rawBinary struct {
	Main   string `yaml:"main"`
	Output string `yaml:"output"`
}

type rawImage struct {
	Name         string            `yaml:"name"`
	Dockerfile   string            `yaml:"dockerfile"`
	Args         map[string]string `yaml:"args"`
	Contexts     map[string]string `yaml:"contexts"`
	Tags         []string          `yaml:"tags"`
	PlatformTags []string          `yaml:"platform_tags"`
	Platforms    []string          `yaml:"platforms"`
	Base         map[string]string `yaml:"base"`
	Contract     string            `yaml:"contract"`
	Windows      rawWindows        `yaml:"windows"`
}

type rawWindows struct {
	Binary string            `yaml:"binary"`
	Bases  map[string]string `yaml:"bases"`
}

// Load reads and parses the config file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // *fs.PathError names the file
	}
	return Parse(path, data)
}

// Parse parses data as the config file name (used in messages and, made
// absolute, as Config.Dir's base). It checks everything that does not depend
// on version variables or the file system.
func Parse(name string, data []byte) (*Config, error) {
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw, lines, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	c := &Config{Path: name, Dir: dir, lines: lines}
	if err := c.fill(raw); err != nil {
		return nil, err
	}
	return c, nil
}

// decode checks the shape of data and decodes it strictly.
func decode(name string, data []byte) (*rawConfig, map[string]int, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, errAt(name, 0, "empty config; want at least binaries")
		}
		return nil, nil, syntaxError(name, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, nil, syntaxError(name, data, err)
		}
		return nil, nil, errAt(name, extra.Line, "a second YAML document; a config is one document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, nil, errAt(name, doc.Line, "want one YAML document")
	}
	chk := &shapeChecker{file: name, lines: map[string]int{}}
	if err := chk.check(doc.Content[0], reflect.TypeFor[rawConfig](), ""); err != nil {
		return nil, nil, err
	}
	// The shape check has accepted the document; the strict decoder is the
	// backstop for anything it does not model.
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	var raw rawConfig
	if err := strict.Decode(&raw); err != nil {
		return nil, nil, yamlError(name, err)
	}
	return &raw, chk.lines, nil
}

// line returns the line of the value at path, or of the nearest parent given.
func (c *Config) line(paths ...string) int {
	for _, p := range paths {
		if l, ok := c.lines[p]; ok {
			return l
		}
	}
	return 0
}

// errorf reports an error at the line of the first known path.
func (c *Config) errorf(paths []string, format string, args ...any) error {
	return errAt(c.Path, c.line(paths...), fmt.Sprintf(format, args...))
}

func at(paths ...string) []string { return paths }

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
