package attest

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// JoinBuildType is the buildDefinition.buildType of the provenance of an
// image helperbuild did not build but joined into an index (helperbuild
// index): copied from its source, its config corrected when FixedConfig.
const JoinBuildType = attestspec.BuildTypeJoin

// JoinedSource is the image a joined platform image came from.
type JoinedSource struct {
	// Ref is the source as the user wrote it; Pinned is the same pinned by
	// the digest it resolved to (an index's, for a platform of an index).
	Ref, Pinned string
	// Manifest is the source's platform manifest digest.
	Manifest v1.Hash
	// ConfigPlatform is the platform the source's config named.
	ConfigPlatform v1.Platform
}

// JoinSpec is what the provenance of one joined platform image records.
type JoinSpec struct {
	Image  Image
	Source JoinedSource
	// FixedConfig says the config was replaced by one naming the
	// binaries' platform (index --fix-platform).
	FixedConfig bool
	// Sources and Platforms are the whole index's, as asked for.
	Sources   []string
	Platforms []v1.Platform
	// HelperbuildVersion names the tool; CI the GitLab CI job (zero
	// outside CI), for the builder id.
	HelperbuildVersion string
	CI                 CI
}

type joinExternal struct {
	Sources     []string `json:"sources"`
	Platforms   []string `json:"platforms"`
	FixPlatform bool     `json:"fixPlatform,omitempty"`
}

type joinInternal struct {
	HelperbuildVersion string `json:"helperbuildVersion"`
	// ConfigPlatform is what the source's config said, when the config
	// was replaced.
	ConfigPlatform string `json:"sourceConfigPlatform,omitempty"`
}

type joinDefinition struct {
	BuildType            string               `json:"buildType"`
	ExternalParameters   joinExternal         `json:"externalParameters"`
	InternalParameters   joinInternal         `json:"internalParameters"`
	ResolvedDependencies []resourceDescriptor `json:"resolvedDependencies"`
}

// JoinProvenance returns the in-toto Statement v1 holding the SLSA v1
// provenance of a platform image joined into an index: its subject the
// platform manifest as published, its one resolved dependency the source
// manifest by digest (named by the source as written, annotated with the
// pinned reference). Nothing in it depends on when or where it ran.
func JoinProvenance(spec JoinSpec) (Statement, error) {
	im := spec.Image
	if err := im.check(); err != nil {
		return Statement{}, err
	}
	switch {
	case spec.HelperbuildVersion == "":
		return Statement{}, fmt.Errorf("provenance of %s: no helperbuild version", im.label())
	case spec.Source.Manifest == (v1.Hash{}) || spec.Source.Ref == "":
		return Statement{}, fmt.Errorf("provenance of %s: no source manifest", im.label())
	}
	ext := joinExternal{Sources: spec.Sources, Platforms: platform.FormatAll(spec.Platforms), FixPlatform: spec.FixedConfig}
	in := joinInternal{HelperbuildVersion: spec.HelperbuildVersion}
	if spec.FixedConfig {
		in.ConfigPlatform = platform.Format(spec.Source.ConfigPlatform)
	}
	dep := resourceDescriptor{URI: spec.Source.Ref, Digest: digestSet(spec.Source.Manifest),
		Annotations: map[string]string{"pinned": spec.Source.Pinned}}
	pred := struct {
		BuildDefinition joinDefinition `json:"buildDefinition"`
		RunDetails      slsaRunDetails `json:"runDetails"`
	}{
		BuildDefinition: joinDefinition{BuildType: JoinBuildType, ExternalParameters: ext, InternalParameters: in,
			ResolvedDependencies: []resourceDescriptor{dep}},
		RunDetails: slsaRunDetails{Builder: slsaBuilder{ID: spec.CI.builderID()}},
	}
	b, err := marshal(pred)
	if err != nil {
		return Statement{}, err
	}
	return newStatement(im, attestspec.PredicateSLSA, b)
}
