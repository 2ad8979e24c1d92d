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
// Before the first release tag (issue 39: it named v0.1.0, which did not
// exist) it is a commit of this history whose template is this one but for
// that default, so what it installs takes every flag the jobs pass.
func TestTemplateVersion(t *testing.T) {
	in := templateInputs(t)
	def := in["helperbuild-version"]
	assert.Contains(t, in["setup"], "@$HELPERBUILD_VERSION", "setup's default installs helperbuild-version")
	assert.NotContains(t, in["setup"], "@latest")

	tags := releaseTags(t)
	if !releaseTag.MatchString(def) {
		require.True(t, commitID.MatchString(def), "helperbuild-version default %q is neither a release tag vX.Y.Z nor a commit id", def)
		require.Empty(t, tags, "release tags exist (newest %v): the default must be a release no older than it (scripts/tag-release.sh sets it)", tags)
		old, ok := templateAt(t, def)
		if ok {
			assert.Equal(t, withoutVersionInput(templateText(t)), withoutVersionInput(old),
				"the template at %s differs from this one: the helperbuild it installs may not take the flags this one passes; set helperbuild-version to a newer commit whose whole suite passed", def)
		}
		return
	}
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

// templateText is the release template of this checkout.
func templateText(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "ci", "gitlab", "release.gitlab-ci.yml"))
	require.NoError(t, err)
	return string(data)
}

// templateAt is the release template at commit; false (logged) outside a
// git checkout or in a shallow one that lacks the commit, where nothing
// can be compared. A full checkout that lacks it fails the test.
func templateAt(t *testing.T, commit string) (string, bool) {
	t.Helper()
	out, err := exec.Command("git", "show", commit+":ci/gitlab/release.gitlab-ci.yml").Output()
	if err == nil {
		return string(out), true
	}
	shallow, serr := exec.Command("git", "rev-parse", "--is-shallow-repository").Output()
	switch {
	case serr != nil:
		t.Logf("not a git checkout (%v): the template at %s is not compared", serr, commit)
	case strings.TrimSpace(string(shallow)) == "true":
		t.Logf("a shallow checkout without %s: its template is not compared", commit)
	default:
		t.Fatalf("helperbuild-version default %s: no such commit with a release template in this history (%v)", commit, err)
	}
	return "", false
}

// withoutVersionInput is a template without its helperbuild-version input
// (the lines from "helperbuild-version:" up to the next input).
func withoutVersionInput(s string) string {
	var out []string
	skip := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "     ") {
			skip = strings.HasPrefix(l, "    helperbuild-version:")
		}
		if !skip {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
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
