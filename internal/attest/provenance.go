package attest

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// URIs this package defines; docs/attestations.md documents them.
const (
	// BuildType is the buildDefinition.buildType of helperbuild's
	// provenance: a release built from a recipe (or one Go main package)
	// by cross-compiling and writing layers onto pinned base images.
	BuildType = "https://github.com/helperbuild/helperbuild/buildtypes/release/v1"
	// LocalBuilderID is runDetails.builder.id of a build outside GitLab CI.
	LocalBuilderID = "https://github.com/helperbuild/helperbuild/builders/local/v1"
)

// ProvenanceMode says how much of the run a provenance records.
type ProvenanceMode string

const (
	// ProvenanceMin records nothing run-specific: the provenance is as
	// reproducible as the image. The default.
	ProvenanceMin ProvenanceMode = "min"
	// ProvenanceMax adds runDetails.metadata (the CI job URL, start and
	// finish times) and the GitLab runner; the index digest then changes
	// with every run.
	ProvenanceMax ProvenanceMode = "max"
)

// ParseProvenanceMode parses "min" or "max" ("" is min).
func ParseProvenanceMode(s string) (ProvenanceMode, error) {
	switch ProvenanceMode(s) {
	case "", ProvenanceMin:
		return ProvenanceMin, nil
	case ProvenanceMax:
		return ProvenanceMax, nil
	}
	return "", fmt.Errorf("provenance mode %q: want min or max", s)
}

// Source is the git checkout a release was built from.
type Source struct {
	// URL is the repository ("https://gitlab.com/group/project"); without
	// it the source is named by its commit alone.
	URL string
	// Ref is the git ref built: "refs/tags/v1.2.3", "refs/heads/main".
	Ref string
	// Commit is the full commit hash (40 hex digits); empty when the build
	// did not come from git, which drops the source from the provenance.
	Commit string
}

var gitCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// uri is the source as SLSA names git sources: git+URL@REF.
func (s Source) uri() string {
	if s.URL == "" {
		return ""
	}
	u := "git+" + s.URL
	if s.Ref != "" {
		u += "@" + s.Ref
	}
	return u
}

// Recipe is the helperbuild.yaml a release was built from.
type Recipe struct {
	// Path is the file's path relative to the source root
	// ("helperbuild.yaml"); "" for a config-free build.
	Path string
	// Digest is the SHA-256 of the file.
	Digest v1.Hash
}

// Package is the Go main package of a config-free release, as the user
// asked for it: external parameters the recipe holds in recipe mode.
type Package struct {
	// Path is the main package's directory relative to the source root
	// ("apps/gitlab-runner-helper").
	Path string
	// BinaryName is --binary-name as given ("" when it was not).
	BinaryName string
	// LDFlags is --ldflags as given, before templating (the rendered
	// flags are internalParameters.ldflags).
	LDFlags string
	// Base is --base: a registry reference, a layout entry's ref name or
	// digest (never its host path), or scratch.
	Base string
}

// CI is the GitLab CI job a release runs in, from its predefined variables.
// Zero outside CI.
type CI struct {
	ServerURL     string // CI_SERVER_URL
	ProjectPath   string // CI_PROJECT_PATH
	JobURL        string // CI_JOB_URL
	RunnerID      string // CI_RUNNER_ID
	RunnerVersion string // CI_RUNNER_VERSION
}

// project is SERVER/PROJECT, "" outside CI.
func (c CI) project() string {
	if c.ServerURL == "" || c.ProjectPath == "" {
		return ""
	}
	return strings.TrimRight(c.ServerURL, "/") + "/" + strings.Trim(c.ProjectPath, "/")
}

// builderID is runDetails.builder.id: the project's CI jobs
// (CI_SERVER_URL/CI_PROJECT_PATH/-/jobs, the prefix of every CI_JOB_URL),
// or LocalBuilderID outside CI.
func (c CI) builderID() string {
	if p := c.project(); p != "" {
		return p + "/-/jobs"
	}
	return LocalBuilderID
}

// Run is when the build ran, for ProvenanceMax.
type Run struct {
	Started, Finished time.Time
}

// ProvenanceSpec is everything a provenance records about one platform
// image. The caller gathers it; nothing here reads the environment.
type ProvenanceSpec struct {
	Image Image
	// Bases are the image's base images (scratch left out).
	Bases []Base
	// Source, Recipe, Images, Platforms and Version are the release's
	// external parameters: what the user asked for.
	Source    Source
	Recipe    Recipe
	Package   *Package      // config-free mode; nil with a recipe
	Images    []string      // every image of the release, by name
	Platforms []v1.Platform // every platform of the release
	Version   string
	// HelperbuildVersion, GoVersion ("go1.26.8"), GOFLAGS, BuildFlags and
	// LDFlags (after templating) are the internal parameters: how
	// helperbuild ran go build.
	HelperbuildVersion string
	GoVersion          string
	GOFLAGS            string
	BuildFlags         []string
	LDFlags            string
	CI                 CI
	Mode               ProvenanceMode
	// Run is used with ProvenanceMax only, and required then.
	Run Run
}

// The SLSA v1 predicate.
type slsaProvenance struct {
	BuildDefinition slsaBuildDefinition `json:"buildDefinition"`
	RunDetails      slsaRunDetails      `json:"runDetails"`
}

type slsaBuildDefinition struct {
	BuildType            string               `json:"buildType"`
	ExternalParameters   externalParameters   `json:"externalParameters"`
	InternalParameters   internalParameters   `json:"internalParameters"`
	ResolvedDependencies []resourceDescriptor `json:"resolvedDependencies,omitempty"`
}

type externalParameters struct {
	Source    string         `json:"source,omitempty"`
	Recipe    *recipeFile    `json:"recipe,omitempty"`
	Package   *packageParams `json:"package,omitempty"`
	Images    []string       `json:"images"`
	Platforms []string       `json:"platforms"`
	Version   string         `json:"version,omitempty"`
}

type packageParams struct {
	Path       string `json:"path"`
	BinaryName string `json:"binaryName,omitempty"`
	LDFlags    string `json:"ldflags,omitempty"`
	Base       string `json:"base"`
}

type recipeFile struct {
	Path   string            `json:"path"`
	Digest map[string]string `json:"digest"`
}

type internalParameters struct {
	HelperbuildVersion string   `json:"helperbuildVersion"`
	GoVersion          string   `json:"goVersion"`
	GOFLAGS            string   `json:"GOFLAGS,omitempty"`
	BuildFlags         []string `json:"buildFlags,omitempty"`
	LDFlags            string   `json:"ldflags,omitempty"`
}

type slsaRunDetails struct {
	Builder  slsaBuilder   `json:"builder"`
	Metadata *slsaMetadata `json:"metadata,omitempty"`
}

type slsaBuilder struct {
	ID                  string               `json:"id"`
	BuilderDependencies []resourceDescriptor `json:"builderDependencies,omitempty"`
}

type slsaMetadata struct {
	InvocationID string `json:"invocationId,omitempty"`
	StartedOn    string `json:"startedOn"`
	FinishedOn   string `json:"finishedOn"`
}

// Provenance returns the in-toto Statement v1 holding the SLSA v1
// provenance of one platform image, its subject the platform manifest.
// resolvedDependencies lists the git source (git+URL@REF, digest
// gitCommit), each base (its pkg:oci purl, digest sha256) and the Go
// toolchain (pkg:golang/stdlib@VERSION). With ProvenanceMin (the default)
// nothing in it depends on when or where the build ran, only on spec.
func Provenance(spec ProvenanceSpec) (Statement, error) {
	im := spec.Image
	if err := im.check(); err != nil {
		return Statement{}, err
	}
	mode, err := ParseProvenanceMode(string(spec.Mode))
	if err != nil {
		return Statement{}, err
	}
	if err := spec.check(); err != nil {
		return Statement{}, fmt.Errorf("provenance of %s: %w", im.label(), err)
	}
	ext := externalParameters{Source: spec.Source.uri(), Images: spec.Images, Version: spec.Version}
	for _, p := range spec.Platforms {
		ext.Platforms = append(ext.Platforms, platform.Format(p))
	}
	if spec.Recipe.Path != "" {
		ext.Recipe = &recipeFile{Path: spec.Recipe.Path, Digest: digestSet(spec.Recipe.Digest)}
	}
	if pk := spec.Package; pk != nil {
		ext.Package = &packageParams{Path: pk.Path, BinaryName: pk.BinaryName, LDFlags: pk.LDFlags, Base: pk.Base}
	}
	var deps []resourceDescriptor
	if spec.Source.Commit != "" {
		deps = append(deps, resourceDescriptor{URI: spec.Source.uri(), Digest: map[string]string{"gitCommit": spec.Source.Commit}})
	}
	for _, b := range spec.Bases {
		if b.none() {
			continue
		}
		bp, err := b.purl(im.platform())
		if err != nil {
			return Statement{}, fmt.Errorf("provenance of %s: %w", im.label(), err)
		}
		deps = append(deps, resourceDescriptor{URI: bp.String(), Name: b.Ref, Digest: digestSet(b.Digest)})
	}
	full, _ := goVersion(spec.GoVersion)
	deps = append(deps, resourceDescriptor{URI: stdlibPurl(spec.GoVersion).String(), Name: full})

	pred := slsaProvenance{
		BuildDefinition: slsaBuildDefinition{
			BuildType:          BuildType,
			ExternalParameters: ext,
			InternalParameters: internalParameters{
				HelperbuildVersion: spec.HelperbuildVersion,
				GoVersion:          full,
				GOFLAGS:            spec.GOFLAGS,
				BuildFlags:         spec.BuildFlags,
				LDFlags:            spec.LDFlags,
			},
			ResolvedDependencies: deps,
		},
		RunDetails: slsaRunDetails{Builder: slsaBuilder{ID: spec.CI.builderID()}},
	}
	if mode == ProvenanceMax {
		pred.RunDetails.Metadata = &slsaMetadata{
			InvocationID: spec.CI.JobURL,
			StartedOn:    spec.Run.Started.UTC().Format(time.RFC3339),
			FinishedOn:   spec.Run.Finished.UTC().Format(time.RFC3339),
		}
		if p := spec.CI.project(); p != "" && spec.CI.RunnerID != "" {
			runner := resourceDescriptor{URI: p + "/-/runners/" + spec.CI.RunnerID, Name: "gitlab-runner"}
			if spec.CI.RunnerVersion != "" {
				runner.Annotations = map[string]string{"version": spec.CI.RunnerVersion}
			}
			pred.RunDetails.Builder.BuilderDependencies = []resourceDescriptor{runner}
		}
	}
	b, err := marshal(pred)
	if err != nil {
		return Statement{}, err
	}
	return newStatement(im, attestspec.PredicateSLSA, b)
}

func (spec ProvenanceSpec) check() error {
	switch {
	case len(spec.Images) == 0:
		return fmt.Errorf("no image names (ProvenanceSpec.Images)")
	case len(spec.Platforms) == 0:
		return fmt.Errorf("no platforms (ProvenanceSpec.Platforms)")
	case spec.HelperbuildVersion == "":
		return fmt.Errorf("no helperbuild version")
	case !strings.HasPrefix(spec.GoVersion, "go"):
		return fmt.Errorf("Go version %q: want the form go1.26.8 (go env GOVERSION)", spec.GoVersion)
	case spec.Source.Commit != "" && !gitCommit.MatchString(spec.Source.Commit):
		return fmt.Errorf("source revision %q is not a full git commit id (40 lowercase hex digits); pass --revision the output of git rev-parse HEAD", spec.Source.Commit)
	case spec.Recipe.Path != "" && (path.IsAbs(spec.Recipe.Path) || spec.Recipe.Digest == (v1.Hash{})):
		return fmt.Errorf("recipe %q: want a path relative to the source root and the file's digest", spec.Recipe.Path)
	case spec.Package != nil && spec.Recipe.Path != "":
		return fmt.Errorf("a recipe and a config-free package: one release is either")
	case spec.Package != nil && (spec.Package.Path == "" || path.IsAbs(spec.Package.Path) || spec.Package.Base == ""):
		return fmt.Errorf("package %q on base %q: want the main package's directory relative to the source root and the base", spec.Package.Path, spec.Package.Base)
	case spec.Mode == ProvenanceMax && (spec.Run.Started.IsZero() || spec.Run.Finished.IsZero()):
		return fmt.Errorf("provenance max needs the run's start and finish times")
	}
	return nil
}
