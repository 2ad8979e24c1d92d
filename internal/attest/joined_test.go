package attest

import (
	"encoding/json"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJoinProvenance(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	src := v1.Hash{Algorithm: "sha256", Hex: "1111111111111111111111111111111111111111111111111111111111111111"}
	spec := JoinSpec{
		Image: Image{Name: "gitlab-runner-helper", Manifest: v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json",
			Digest: v1.Hash{Algorithm: "sha256", Hex: "2222222222222222222222222222222222222222222222222222222222222222"}, Size: 500, Platform: &arm64}},
		Source:      JoinedSource{Ref: "registry.example.com/h:arm64-v17.10.0", Pinned: "registry.example.com/h@sha256:" + src.Hex, Manifest: src, ConfigPlatform: v1.Platform{OS: "linux", Architecture: "amd64"}},
		FixedConfig: true, Sources: []string{"registry.example.com/h:arm64-v17.10.0"}, Platforms: []v1.Platform{arm64},
		HelperbuildVersion: "v1.0.0",
	}
	st, err := JoinProvenance(spec)
	require.NoError(t, err)
	again, err := JoinProvenance(spec)
	require.NoError(t, err)
	assert.Equal(t, st.JSON, again.JSON, "a pure function of the spec")
	var doc struct {
		Subject   []resourceDescriptor `json:"subject"`
		Predicate struct {
			BuildDefinition struct {
				BuildType            string               `json:"buildType"`
				InternalParameters   map[string]string    `json:"internalParameters"`
				ResolvedDependencies []resourceDescriptor `json:"resolvedDependencies"`
			} `json:"buildDefinition"`
			RunDetails struct {
				Builder struct{ ID string } `json:"builder"`
			} `json:"runDetails"`
		} `json:"predicate"`
	}
	require.NoError(t, json.Unmarshal(st.JSON, &doc))
	assert.Equal(t, "2222222222222222222222222222222222222222222222222222222222222222", doc.Subject[0].Digest["sha256"])
	bd := doc.Predicate.BuildDefinition
	assert.Equal(t, JoinBuildType, bd.BuildType)
	assert.Equal(t, "linux/amd64", bd.InternalParameters["sourceConfigPlatform"])
	require.Len(t, bd.ResolvedDependencies, 1)
	assert.Equal(t, src.Hex, bd.ResolvedDependencies[0].Digest["sha256"])
	assert.Equal(t, LocalBuilderID, doc.Predicate.RunDetails.Builder.ID)

	spec.Source.Manifest = v1.Hash{}
	_, err = JoinProvenance(spec)
	assert.ErrorContains(t, err, "no source manifest")
}
