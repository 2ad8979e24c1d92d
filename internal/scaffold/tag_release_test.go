package scaffold

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tagRepo is a git repository holding scripts/tag-release.sh and the
// release template as this checkout has them, one commit; run runs git
// or the script in it.
func tagRepo(t *testing.T) (dir string, run func(env []string, name string, args ...string) (string, error)) {
	t.Helper()
	dir = t.TempDir()
	for _, f := range []string{"scripts/tag-release.sh", "ci/gitlab/release.gitlab-ci.yml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o755))
	}
	run = func(env []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "start"}} {
		out, err := run(nil, "git", args...)
		require.NoError(t, err, out)
	}
	return dir, run
}

// TestTagReleaseScript: tagging a release is a checked step (issue 39):
// the template's default becomes the version in the commit that is
// tagged, the check runs on that very commit, and a failed check, an
// unclean tree, a version not newer than the last, or one tagged already
// tag nothing and leave the history as it was.
func TestTagReleaseScript(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to test scripts/tag-release.sh: %v", err)
	}
	dir, run := tagRepo(t)
	head := func() string {
		out, err := run(nil, "git", "rev-parse", "HEAD")
		require.NoError(t, err, out)
		return strings.TrimSpace(out)
	}
	start := head()
	// The check sees the release commit: the template names the version.
	onRelease := "HELPERBUILD_RELEASE_CHECK=grep -q '^      default: v0.1.0$' ci/gitlab/release.gitlab-ci.yml && test -z \"$(git status --porcelain)\""

	out, err := run([]string{"HELPERBUILD_RELEASE_CHECK=false"}, "scripts/tag-release.sh", "v0.1.0")
	require.Error(t, err, out)
	assert.Contains(t, out, "'false' failed on the release commit: it was removed again, nothing is tagged")
	assert.Equal(t, start, head(), "the release commit is gone")
	tags, _ := run(nil, "git", "tag")
	assert.Empty(t, strings.TrimSpace(tags))

	out, err = run(nil, "scripts/tag-release.sh", "0.1.0")
	require.Error(t, err)
	assert.Contains(t, out, "0.1.0 is not a release version")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "stray"), nil, 0o644))
	out, err = run([]string{"HELPERBUILD_RELEASE_CHECK=true"}, "scripts/tag-release.sh", "v0.1.0")
	require.Error(t, err)
	assert.Contains(t, out, "the work tree has changes")
	require.NoError(t, os.Remove(filepath.Join(dir, "stray")))

	out, err = run([]string{onRelease}, "scripts/tag-release.sh", "v0.1.0")
	require.NoError(t, err, out)
	assert.Contains(t, out, "tagged v0.1.0 at ")
	assert.Contains(t, out, "git push origin HEAD v0.1.0")
	at, err := run(nil, "git", "rev-parse", "v0.1.0^{commit}")
	require.NoError(t, err, at)
	assert.Equal(t, head(), strings.TrimSpace(at), "the tag is the release commit")
	parent, _ := run(nil, "git", "rev-parse", "HEAD^")
	assert.Equal(t, start, strings.TrimSpace(parent), "one commit on top of where it started")
	tmpl, _ := run(nil, "git", "show", "v0.1.0:ci/gitlab/release.gitlab-ci.yml")
	assert.Contains(t, tmpl, "    helperbuild-version:\n")
	assert.Contains(t, tmpl, "\n      default: v0.1.0\n")
	assert.Equal(t, 1, strings.Count(tmpl, "default: v0.1.0"), "only helperbuild-version's default changed")

	for version, want := range map[string]string{
		"v0.1.0":       "tag v0.1.0 exists already",
		"v0.0.9":       "v0.0.9 is not newer than the newest release tag v0.1.0",
		"v0.1.0-rc.1x": "is not newer than the newest release tag v0.1.0",
	} {
		out, err = run([]string{"HELPERBUILD_RELEASE_CHECK=true"}, "scripts/tag-release.sh", version)
		require.Error(t, err, version)
		assert.Contains(t, out, want, version)
	}
}
