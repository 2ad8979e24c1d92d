package attest

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
)

const commit = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"

func provenanceSpec(t testing.TB) ProvenanceSpec {
	t.Helper()
	return ProvenanceSpec{
		Image: testImage(t, linuxV7),
		Bases: []Base{{Ref: "registry.example.com/base/runner-helper:alpine", Digest: hash(t, "base arm v7")}},
		Source: Source{
			URL:    "https://gitlab.example.com/group/gitlab-runner",
			Ref:    "refs/tags/v17.10.0",
			Commit: commit,
		},
		Recipe:             Recipe{Path: "helperbuild.yaml", Digest: hash(t, "recipe")},
		Images:             []string{"gitlab-runner-helper", "gitlab-runner"},
		Platforms:          []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, linuxV7},
		Version:            "v17.10.0",
		HelperbuildVersion: "v0.9.0",
		GoVersion:          "go1.26.8",
		GOFLAGS:            "-buildvcs=false",
		BuildFlags:         []string{"-trimpath"},
		LDFlags:            "-w -X gitlab.com/gitlab-org/gitlab-runner/common.VERSION=v17.10.0",
		CI:                 CI{ServerURL: "https://gitlab.example.com/", ProjectPath: "group/gitlab-runner", JobURL: "https://gitlab.example.com/group/gitlab-runner/-/jobs/4242", RunnerID: "17", RunnerVersion: "17.10.0"},
	}
}

func TestProvenanceGolden(t *testing.T) {
	spec := provenanceSpec(t)
	s, err := Provenance(spec)
	require.NoError(t, err)
	golden(t, "provenance", s.JSON)
	assert.Equal(t, attestspec.PredicateSLSA, s.PredicateType)

	st := parseStatement(t, s)
	assert.Equal(t, map[string]string{"sha256": spec.Image.Manifest.Digest.Hex}, st.GetSubject()[0].GetDigest())
	p := parseProvenance(t, s)
	bd := p.GetBuildDefinition()
	assert.Equal(t, BuildType, bd.GetBuildType())
	ext := bd.GetExternalParameters().AsMap()
	assert.Equal(t, "git+https://gitlab.example.com/group/gitlab-runner@refs/tags/v17.10.0", ext["source"])
	assert.Equal(t, map[string]any{"path": "helperbuild.yaml", "digest": map[string]any{"sha256": spec.Recipe.Digest.Hex}}, ext["recipe"])
	assert.Equal(t, []any{"linux/amd64", "linux/arm64", "linux/arm/v7"}, ext["platforms"])
	assert.Equal(t, []any{"gitlab-runner-helper", "gitlab-runner"}, ext["images"])
	assert.Equal(t, "v17.10.0", ext["version"])
	in := bd.GetInternalParameters().AsMap()
	assert.Equal(t, "v0.9.0", in["helperbuildVersion"])
	assert.Equal(t, "go1.26.8", in["goVersion"])
	assert.Equal(t, spec.LDFlags, in["ldflags"])

	deps := bd.GetResolvedDependencies()
	require.Len(t, deps, 3)
	assert.Equal(t, "git+https://gitlab.example.com/group/gitlab-runner@refs/tags/v17.10.0", deps[0].GetUri())
	assert.Equal(t, map[string]string{"gitCommit": commit}, deps[0].GetDigest())
	assert.Equal(t, "registry.example.com/base/runner-helper:alpine", deps[1].GetName())
	assert.Equal(t, map[string]string{"sha256": spec.Bases[0].Digest.Hex}, deps[1].GetDigest())
	assert.Contains(t, deps[1].GetUri(), "pkg:oci/runner-helper@"+spec.Bases[0].Digest.String())
	assert.Equal(t, "pkg:golang/stdlib@1.26.8", deps[2].GetUri())

	rd := p.GetRunDetails()
	assert.Equal(t, "https://gitlab.example.com/group/gitlab-runner/-/jobs", rd.GetBuilder().GetId())
	assert.Nil(t, rd.GetMetadata(), "nothing run-specific by default")
	assert.Empty(t, rd.GetBuilder().GetBuilderDependencies())
	assert.NotContains(t, string(s.JSON), "4242", "the job is run-specific")
	assert.NotContains(t, string(s.JSON), "runners/17")
}

// min holds nothing of the run: two runs of the same release in other CI
// jobs, on other runners, at other times, give the same bytes.
func TestProvenanceDeterministic(t *testing.T) {
	a, err := Provenance(provenanceSpec(t))
	require.NoError(t, err)
	spec := provenanceSpec(t)
	spec.CI.JobURL, spec.CI.RunnerID, spec.CI.RunnerVersion = "https://gitlab.example.com/group/gitlab-runner/-/jobs/9999", "99", "18.0.0"
	spec.Run = Run{Started: time.Now(), Finished: time.Now()}
	b, err := Provenance(spec)
	require.NoError(t, err)
	assert.Equal(t, string(a.JSON), string(b.JSON))
	assert.Equal(t, a.Digest(), b.Digest())
}

func TestProvenanceMax(t *testing.T) {
	spec := provenanceSpec(t)
	spec.Mode = ProvenanceMax
	spec.Run = Run{Started: epoch.Add(time.Hour), Finished: epoch.Add(time.Hour + 95*time.Second)}
	s, err := Provenance(spec)
	require.NoError(t, err)
	golden(t, "provenance-max", s.JSON)
	p := parseProvenance(t, s)
	md := p.GetRunDetails().GetMetadata()
	assert.Equal(t, "https://gitlab.example.com/group/gitlab-runner/-/jobs/4242", md.GetInvocationId())
	assert.Equal(t, spec.Run.Started, md.GetStartedOn().AsTime())
	assert.Equal(t, spec.Run.Finished, md.GetFinishedOn().AsTime())
	runner := p.GetRunDetails().GetBuilder().GetBuilderDependencies()
	require.Len(t, runner, 1)
	assert.Equal(t, "https://gitlab.example.com/group/gitlab-runner/-/runners/17", runner[0].GetUri())
	assert.Equal(t, "17.10.0", runner[0].GetAnnotations().AsMap()["version"])

	min, err := Provenance(provenanceSpec(t))
	require.NoError(t, err)
	assert.NotEqual(t, min.Digest(), s.Digest())
}

func TestProvenanceLocal(t *testing.T) {
	spec := provenanceSpec(t)
	spec.CI = CI{}
	spec.Mode = ProvenanceMax
	spec.Run = Run{Started: epoch, Finished: epoch.Add(time.Minute)}
	spec.Source = Source{Commit: commit} // a checkout without a remote
	spec.Recipe = Recipe{}               // config-free
	spec.Bases = []Base{{Ref: "scratch"}}
	s, err := Provenance(spec)
	require.NoError(t, err)
	p := parseProvenance(t, s)
	assert.Equal(t, LocalBuilderID, p.GetRunDetails().GetBuilder().GetId())
	assert.Empty(t, p.GetRunDetails().GetMetadata().GetInvocationId())
	assert.Empty(t, p.GetRunDetails().GetBuilder().GetBuilderDependencies())
	ext := p.GetBuildDefinition().GetExternalParameters().AsMap()
	assert.NotContains(t, ext, "recipe")
	assert.NotContains(t, ext, "source")
	deps := p.GetBuildDefinition().GetResolvedDependencies()
	require.Len(t, deps, 2, "the commit and Go; scratch is no dependency")
	assert.Equal(t, map[string]string{"gitCommit": commit}, deps[0].GetDigest())

	// Without git at all there is no source dependency.
	spec.Source = Source{}
	s, err = Provenance(spec)
	require.NoError(t, err)
	assert.Len(t, parseProvenance(t, s).GetBuildDefinition().GetResolvedDependencies(), 1)
}

func TestProvenanceBadInput(t *testing.T) {
	tests := []struct {
		name string
		edit func(*ProvenanceSpec)
		want string
	}{
		{"short commit", func(s *ProvenanceSpec) { s.Source.Commit = "1a2b3c4" }, `source revision "1a2b3c4" is not a full git commit id`},
		{"no images", func(s *ProvenanceSpec) { s.Images = nil }, "no image names"},
		{"no platforms", func(s *ProvenanceSpec) { s.Platforms = nil }, "no platforms"},
		{"no helperbuild version", func(s *ProvenanceSpec) { s.HelperbuildVersion = "" }, "no helperbuild version"},
		{"Go version without go", func(s *ProvenanceSpec) { s.GoVersion = "1.26.8" }, `Go version "1.26.8"`},
		{"absolute recipe path", func(s *ProvenanceSpec) { s.Recipe.Path = "/home/ci/helperbuild.yaml" }, "relative to the source root"},
		{"recipe without digest", func(s *ProvenanceSpec) { s.Recipe.Digest = v1.Hash{} }, "the file's digest"},
		{"max without times", func(s *ProvenanceSpec) { s.Mode = ProvenanceMax }, "start and finish times"},
		{"unknown mode", func(s *ProvenanceSpec) { s.Mode = "full" }, `provenance mode "full": want min or max`},
		{"base without digest", func(s *ProvenanceSpec) { s.Bases[0].Digest = v1.Hash{} }, "no digest"},
		{"image without platform", func(s *ProvenanceSpec) { s.Image.Manifest.Platform = nil }, "no platform"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := provenanceSpec(t)
			tt.edit(&spec)
			_, err := Provenance(spec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseProvenanceMode(t *testing.T) {
	for in, want := range map[string]ProvenanceMode{"": ProvenanceMin, "min": ProvenanceMin, "max": ProvenanceMax} {
		got, err := ParseProvenanceMode(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := ParseProvenanceMode("MAX")
	assert.Error(t, err)
}

// The statement is plain encoding/json: keys in a fixed order, nothing
// escaped that needs no escaping.
func TestProvenanceEncoding(t *testing.T) {
	s, err := Provenance(provenanceSpec(t))
	require.NoError(t, err)
	var top []string
	dec := json.NewDecoder(bytes.NewReader(s.JSON))
	_, _ = dec.Token()
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		top = append(top, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	assert.Equal(t, []string{"_type", "subject", "predicateType", "predicate"}, top)
	assert.NotContains(t, string(s.JSON), `\u0026`)
}

// A config-free release records what the user asked for: the package,
// --binary-name, --ldflags as given and the base; in-toto's bindings
// still validate it.
func TestProvenanceConfigFree(t *testing.T) {
	spec := provenanceSpec(t)
	spec.Recipe = Recipe{}
	spec.Package = &Package{Path: "apps/gitlab-runner-helper", BinaryName: "gitlab-runner-helper",
		LDFlags: "-X example.com/common.VERSION={{.Version}}", Base: "registry.example.com/base/runner-helper:alpine"}
	st, err := Provenance(spec)
	require.NoError(t, err)
	p := parseProvenance(t, st)
	ext := p.GetBuildDefinition().GetExternalParameters().AsMap()
	assert.Equal(t, map[string]any{"path": "apps/gitlab-runner-helper", "binaryName": "gitlab-runner-helper",
		"ldflags": "-X example.com/common.VERSION={{.Version}}", "base": "registry.example.com/base/runner-helper:alpine"}, ext["package"])
	assert.NotContains(t, ext, "recipe")

	spec.Package.Path = "/home/me/src/apps/x"
	_, err = Provenance(spec)
	assert.ErrorContains(t, err, "relative to the source root")
	spec.Package.Path, spec.Recipe = "apps/x", Recipe{Path: "helperbuild.yaml", Digest: hash(t, "recipe")}
	_, err = Provenance(spec)
	assert.ErrorContains(t, err, "a recipe and a config-free package")
}
