package release

import (
	"bytes"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"

	"github.com/helperbuild/helperbuild/internal/product"
)

// TestGitLabLines: what the summary tells an operator to paste depends on
// the image's name or contract and on whether its tags follow GitLab's
// <arch>-v<version> scheme.
func TestGitLabLines(t *testing.T) {
	digest := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	amd64, arm := v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}
	image := func(name, contract string, amdTags, armTags []string) product.Image {
		return product.Image{Name: name, Contract: contract, Digest: digest, Platforms: []product.Platform{
			{Platform: amd64, Tags: amdTags}, {Platform: arm, Tags: armTags}}}
	}
	const repo = "registry.example.com/g/helper"
	versionLine := `helper_image = "registry.example.com/g/helper:v${CI_RUNNER_VERSION}"`
	pinned := "  config.toml, pinned to this build:\n    [runners.kubernetes]\n      helper_image = \"registry.example.com/g/helper@sha256:" + digest.Hex + "\"\n"
	for _, tc := range []struct {
		name      string
		img       product.Image
		tags      []string
		want, not []string
		empty     bool // prints nothing at all
	}{
		{name: "GitLab's scheme", img: image("gitlab-runner-helper", "", []string{"x86_64-v17.10.0"}, []string{"arm-v17.10.0"}),
			tags: []string{repo + ":v17.10.0", repo + ":latest"},
			want: []string{`helper_image = "registry.example.com/g/helper@sha256:` + digest.Hex + `"`, versionLine}},
		{name: "flavoured tags, version without v", img: image("gitlab-runner-helper", "", []string{"ubuntu-x86_64-v17.10.0"}, []string{"ubuntu-arm-v17.10.0"}),
			tags: []string{repo + ":17.10.0"},
			want: []string{`helper_image = "registry.example.com/g/helper:${CI_RUNNER_VERSION}"`}},
		{name: "a platform without a GitLab tag", img: image("gitlab-runner-helper", "", []string{"x86_64-v17.10.0"}, nil),
			tags: []string{repo + ":v17.10.0"}, want: []string{"pinned to this build"}, not: []string{"CI_RUNNER_VERSION"}},
		{name: "arch names that are not the platform's", img: image("gitlab-runner-helper", "", []string{"arm-v17.10.0"}, []string{"x86_64-v17.10.0"}),
			tags: []string{repo + ":v17.10.0"}, want: []string{pinned}, not: []string{"CI_RUNNER_VERSION"}},
		{name: "versions that differ", img: image("gitlab-runner-helper", "", []string{"x86_64-v17.10.0"}, []string{"arm-v17.11.0"}),
			tags: []string{repo + ":v17.10.0"}, want: []string{pinned}, not: []string{"CI_RUNNER_VERSION"}},
		{name: "no index tag of the version", img: image("gitlab-runner-helper", "", []string{"x86_64-v17.10.0"}, []string{"arm-v17.10.0"}),
			tags: []string{repo + ":stable"}, want: []string{pinned}, not: []string{"CI_RUNNER_VERSION"}},
		{name: "a helper by its contract", img: image("my-helper", "helper", nil, nil), tags: []string{repo + ":v1"},
			want: []string{"[runners.kubernetes]"}},
		{name: "a contract says otherwise", img: image("gitlab-runner-helper", "runner", nil, nil), tags: []string{"registry.example.com/g/gitlab-runner-helper:v1"},
			want: []string{"Helm chart values", "      image: g/gitlab-runner-helper\n", "      tag: v1\n"}, not: []string{"helper_image"}},
		{name: "a runner", img: image("group/gitlab-runner", "", nil, nil), tags: []string{"localhost:5000/group/gitlab-runner:latest", "localhost:5000/group/gitlab-runner:v2"},
			want: []string{"      registry: localhost:5000\n      image: group/gitlab-runner\n      tag: v2\n"}},
		{name: "a runner without tags", img: image("gitlab-runner", "", nil, nil), empty: true},
		{name: "another image", img: image("tools", "", nil, nil), tags: []string{"r.example.com/tools:v1"}, empty: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			gitlabLines(&b, tc.img, repo, tc.tags)
			if tc.empty {
				assert.Empty(t, b.String())
			} else {
				assert.NotEmpty(t, tc.want, "a case that prints says what")
			}
			for _, w := range tc.want {
				assert.Contains(t, b.String(), w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, b.String(), n)
			}
		})
	}
}

// TestSourcesAligned: index's sources table is a table, its second
// column aligned whatever the platforms' lengths (issue 39).
func TestSourcesAligned(t *testing.T) {
	d, _ := v1.NewHash("sha256:" + strings.Repeat("a", 64))
	rep := &Report{Sources: []IndexSource{
		{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Source: "reg/h:x86_64-v1", SourceManifest: d},
		{Platform: v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}, Source: "reg/h:arm-v1", SourceManifest: d,
			Fixed: true, ConfigSaid: v1.Platform{OS: "linux", Architecture: "amd64"}, Binaries: 2, Manifest: d},
		{Platform: v1.Platform{OS: "linux", Architecture: "s390x"}, Source: "reg/h:s390x-v1", SourceManifest: d},
	}}
	var b strings.Builder
	rep.WriteSources(&b)
	lines := strings.Split(b.String(), "\n")
	assert.Equal(t, "    linux/amd64   reg/h:x86_64-v1 ("+d.String()+")", lines[1])
	assert.Equal(t, "    linux/arm/v7  reg/h:arm-v1 ("+d.String()+")", lines[2])
	assert.Equal(t, "    linux/s390x   reg/h:s390x-v1 ("+d.String()+")", lines[4])
}
