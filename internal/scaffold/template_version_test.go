package scaffold

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/semver"
	"gopkg.in/yaml.v3"
)

// templateInputs reads the spec (the first YAML document) of the release
// template: each input's default.
func templateInputs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "ci", "gitlab", "release.gitlab-ci.yml"))
	require.NoError(t, err)
	var spec struct {
		Spec struct {
			Inputs map[string]struct {
				Default any `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"spec"`
	}
	require.NoError(t, yaml.NewDecoder(bytes.NewReader(data)).Decode(&spec))
	out := map[string]string{}
	for k, v := range spec.Spec.Inputs {
		if s, ok := v.Default.(string); ok {
			out[k] = s
		}
	}
	return out
}

// TestTemplateVersion: the template installs, by default, the helperbuild
// release it belongs to (issue 25: it installed @latest), so an include at
// ref: vX gets helperbuild vX. Its helperbuild-version default is a release
// tag no older than the newest release tag of this history, and on a
// tagged commit that tag itself: a tag pipeline whose template names
// another release fails here, in its test stage, before anything is built.
func TestTemplateVersion(t *testing.T) {
	in := templateInputs(t)
	def := in["helperbuild-version"]
	require.True(t, releaseTag.MatchString(def), "helperbuild-version default %q is not a release tag vX.Y.Z", def)
	assert.Contains(t, in["setup"], "@$HELPERBUILD_VERSION", "setup's default installs helperbuild-version")
	assert.NotContains(t, in["setup"], "@latest")

	tags := releaseTags(t)
	if len(tags) == 0 {
		t.Logf("no release tag in this history yet: %s is the first release", def)
		return
	}
	newest := tags[len(tags)-1]
	assert.GreaterOrEqual(t, semver.Compare(def, newest), 0, "helperbuild-version default %s is older than the newest release tag %s", def, newest)
	if at := tagsAtHead(t); len(at) > 0 {
		assert.Contains(t, at, def, "HEAD is tagged %v: set helperbuild-version's default to that release in ci/gitlab/release.gitlab-ci.yml", at)
	}
}

// releaseTags are the release tags merged into HEAD, oldest first; none
// outside a git checkout.
func releaseTags(t *testing.T) []string {
	return gitTags(t, "tag", "--merged", "HEAD")
}

// tagsAtHead are the release tags that point at HEAD.
func tagsAtHead(t *testing.T) []string {
	return gitTags(t, "tag", "--points-at", "HEAD")
}

func gitTags(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("git", args...)
	out, err := cmd.Output()
	if err != nil {
		if _, lerr := exec.LookPath("git"); lerr != nil {
			t.Fatalf("git is needed to compare the template's version with the release tags: %v", lerr)
		}
		t.Logf("git %s: %v (not a git checkout): no tags to compare", strings.Join(args, " "), err)
		return nil
	}
	var tags []string
	for _, l := range strings.Fields(string(out)) {
		if releaseTag.MatchString(l) {
			tags = append(tags, l)
		}
	}
	semver.Sort(tags)
	return tags
}

// TestTemplateVersionCompare: the comparison the test above relies on.
func TestTemplateVersionCompare(t *testing.T) {
	tags := []string{"v1.10.0", "v1.2.0", "v1.9.1", "v1.10.0-rc.1"}
	semver.Sort(tags)
	assert.Equal(t, []string{"v1.2.0", "v1.9.1", "v1.10.0-rc.1", "v1.10.0"}, tags)
	assert.False(t, releaseTag.MatchString("latest"))
}
