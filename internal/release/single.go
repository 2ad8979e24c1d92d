package release

import (
	"fmt"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/recipe"
)

// Package describes config-free mode: one Go main package put at
// /usr/bin/<name> on top of a base image.
type Package struct {
	Dir        string        // module root (absolute)
	Main       string        // package path, e.g. ./apps/gitlab-runner-helper
	BinaryName string        // default: last element of Main
	Base       string        // base reference or "scratch"
	Platforms  []v1.Platform // nil: every platform the base offers
	Flags      []string
	Ldflags    string // rendered
	Env        []string
	Tags       []string // index tags (tag part only)
}

// PackageName is the name of a config-free image and of its binary:
// binaryName, else the last element of main.
func PackageName(main, binaryName string) (string, error) {
	name := binaryName
	if name == "" {
		name = path.Base(strings.TrimSuffix(path.Clean(main), "/"))
		if name == "." || name == "/" || name == ".." {
			return "", fmt.Errorf("package %q has no name to give the binary; pass --binary-name", main)
		}
	}
	if strings.ContainsAny(name, `/\ "$`) {
		return "", fmt.Errorf("binary name %q: want a plain file name", name)
	}
	return name, nil
}

// PackagePlan turns config-free mode into a plan with one binary and one
// image whose recipe is a generated Dockerfile:
//
//	FROM <base>
//	COPY --from=binaries --chmod=0755 <name>-<os>-<arch><variant> /usr/bin/<name>
//	ENTRYPOINT ["/usr/bin/<name>"]   (on scratch only; otherwise the base's config is kept)
func PackagePlan(p Package) (*recipe.Plan, error) {
	name, err := PackageName(p.Main, p.BinaryName)
	if err != nil {
		return nil, err
	}
	outputs := map[string]string{}
	// The base decides the platforms later; name a binary for each one Go has.
	for _, pl := range platform.Known() {
		outputs[platform.Format(pl)] = name + "-" + pl.OS + "-" + pl.Architecture + pl.Variant
	}
	var df strings.Builder
	df.WriteString("ARG BASE\nFROM $BASE\nARG TARGETOS\nARG TARGETARCH\nARG TARGETVARIANT\n")
	fmt.Fprintf(&df, "COPY --from=binaries --chmod=0755 %s-${TARGETOS}-${TARGETARCH}${TARGETVARIANT} /usr/bin/%s\n", name, name)
	if p.Base == "scratch" {
		fmt.Fprintf(&df, "ENTRYPOINT [\"/usr/bin/%s\"]\n", name)
	}
	return &recipe.Plan{
		Dir:       p.Dir,
		Platforms: p.Platforms,
		Flags:     p.Flags,
		Ldflags:   p.Ldflags,
		Env:       p.Env,
		Binaries:  []recipe.Binary{{Main: p.Main, Outputs: outputs}},
		Images: []recipe.Image{{
			Name:           name,
			DockerfileName: "generated Dockerfile for " + p.Main,
			DockerfileData: []byte(df.String()),
			Args:           map[string]string{"BASE": p.Base},
			Contexts:       map[string]string{"binaries": recipe.BinariesContext},
			Tags:           p.Tags,
			Platforms:      p.Platforms,
		}},
	}, nil
}
