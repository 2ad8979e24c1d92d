package recipe

import (
	"fmt"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// Package describes config-free mode: one Go main package put at
// /usr/bin/<name> on top of a base image (on a Windows platform, at
// C:\<name>\<name>.exe, without the generated Dockerfile: see
// internal/release's Windows units).
type Package struct {
	Dir        string        // module root (absolute)
	Main       string        // package path, e.g. ./apps/gitlab-runner-helper
	BinaryName string        // default: last element of Main
	Base       string        // base reference or "scratch"
	Platforms  []v1.Platform // normalised; nil: every platform the base offers
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
//
// Without platforms the base decides them: the plan's image has none and
// nothing is rendered until ForBasePlatforms is given those the base offers.
func PackagePlan(p Package) (*Plan, error) {
	name, err := PackageName(p.Main, p.BinaryName)
	if err != nil {
		return nil, err
	}
	var df strings.Builder
	df.WriteString("ARG BASE\nFROM $BASE\nARG TARGETOS\nARG TARGETARCH\nARG TARGETVARIANT\n")
	fmt.Fprintf(&df, "COPY --from=binaries --chmod=0755 %s-${TARGETOS}-${TARGETARCH}${TARGETVARIANT} /usr/bin/%s\n", name, name)
	if p.Base == "scratch" {
		fmt.Fprintf(&df, "ENTRYPOINT [\"/usr/bin/%s\"]\n", name)
	}
	plan := &Plan{
		Dir:      p.Dir,
		Flags:    p.Flags,
		Ldflags:  p.Ldflags,
		Env:      p.Env,
		Binaries: []Binary{{Main: p.Main}},
		Images: []Image{{
			Name:           name,
			DockerfileName: "generated Dockerfile for " + p.Main,
			DockerfileData: []byte(df.String()),
			Args:           map[string]string{"BASE": p.Base},
			Contexts:       map[string]string{"binaries": BinariesContext},
			Tags:           p.Tags,
		}},
	}
	if len(p.Platforms) == 0 {
		plan.pkg = &p
		return plan, nil
	}
	// Linux entries as given, then Windows ones by build: the index's order.
	for _, pl := range platform.Ordered(p.Platforms) {
		out := name + "-" + pl.OS + "-" + pl.Architecture + pl.Variant
		if pl.OSVersion != "" {
			out += "-" + pl.OSVersion // one binary per Windows entry: the entries differ only here
		}
		plan.Platforms = append(plan.Platforms, Platform{Platform: pl, Outputs: []string{out}})
		plan.Images[0].Platforms = append(plan.Images[0].Platforms, ImagePlatform{Platform: pl})
	}
	return plan, nil
}

// ForBasePlatforms is the plan of a config-free package whose base decides
// the platforms (see PackagePlan), for platforms, those the base offers.
func (p *Plan) ForBasePlatforms(platforms []v1.Platform) (*Plan, error) {
	if p.pkg == nil {
		return nil, fmt.Errorf("the plan's platforms are set already")
	}
	if len(platforms) == 0 {
		return nil, fmt.Errorf("no platforms for the plan of %s", p.pkg.Main)
	}
	pkg := *p.pkg
	pkg.Platforms = platforms
	return PackagePlan(pkg)
}
