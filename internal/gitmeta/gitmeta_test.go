package gitmeta

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
)

func TestCleanRemote(t *testing.T) {
	for in, want := range map[string]string{
		"git@gitlab.com:group/proj.git":                 "https://gitlab.com/group/proj",
		"https://user:secret@gitlab.com/group/proj.git": "https://gitlab.com/group/proj",
		"ssh://git@gitlab.com:22/group/proj.git":        "https://gitlab.com/group/proj",
		"https://gitlab.com/group/proj":                 "https://gitlab.com/group/proj",
		"":                                              "",
	} {
		assert.Equal(t, want, CleanRemote(in), in)
	}
}

func TestParseEpoch(t *testing.T) {
	got, err := ParseEpoch("1700000000")
	require.NoError(t, err)
	assert.Equal(t, time.Unix(1700000000, 0).UTC(), got)
	got, err = ParseEpoch("2025-03-20T10:11:12+01:00")
	require.NoError(t, err)
	assert.Equal(t, "2025-03-20T09:11:12Z", got.Format(time.RFC3339))
	_, err = ParseEpoch("yesterday")
	assert.ErrorContains(t, err, `epoch "yesterday"`)
}

func TestRead(t *testing.T) {
	testkit.Tool(t, "git")
	ctx := context.Background()
	dir := t.TempDir()
	assert.Equal(t, Info{}, Read(ctx, dir, All), "not a repository")
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z", "GIT_AUTHOR_DATE=2024-01-02T03:04:05Z")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q", "-b", "main")
	git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x")
	git("tag", "v1.2.3")
	git("remote", "add", "origin", "git@gitlab.example.com:g/p.git")
	info := Read(ctx, dir, All)
	assert.Equal(t, "v1.2.3", info.Version)
	assert.Len(t, info.Revision, 40)
	assert.Equal(t, "main", info.Branch)
	assert.Equal(t, "2024-01-02T03:04:05Z", info.CommitTime.Format(time.RFC3339))
	assert.Equal(t, "https://gitlab.example.com/g/p", info.Remote)
	assert.Equal(t, "https://gitlab.example.com/g/p", info.RemoteURI)
	assert.Equal(t, []string{"v1.2.3"}, info.Tags)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	assert.Equal(t, real, info.Toplevel)

	// Only what is asked for.
	assert.Equal(t, Info{Branch: "main", Remote: "https://gitlab.example.com/g/p", RemoteURI: "https://gitlab.example.com/g/p"}, Read(ctx, dir, Branch|Remote))
	assert.Equal(t, Info{}, Read(ctx, dir, 0))

	// A remote that is a local path has no browsable URL, but a file: URI.
	git("remote", "set-url", "origin", "../upstream.git")
	info = Read(ctx, dir, Remote)
	assert.Empty(t, info.Remote)
	assert.Equal(t, "file://"+filepath.Join(filepath.Dir(dir), "upstream.git"), info.RemoteURI)
	git("remote", "set-url", "origin", "/srv/git/p.git")
	assert.Equal(t, "file:///srv/git/p.git", Read(ctx, dir, Remote).RemoteURI)
}

func TestShowFile(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "helperbuild.yaml"), []byte("x: 1\n"), 0o644))
	git("add", ".")
	git("commit", "-q", "-m", "x")
	got, err := ShowFile(ctx, filepath.Join(dir, "sub"), "HEAD", "sub/helperbuild.yaml")
	require.NoError(t, err)
	assert.Equal(t, "x: 1\n", string(got), "the path is from the root, wherever git runs")
	_, err = ShowFile(ctx, dir, "HEAD", "helperbuild.yaml")
	assert.ErrorContains(t, err, "git show HEAD:helperbuild.yaml")
	assert.NotErrorIs(t, err, ErrNoCommit)
	_, err = ShowFile(ctx, dir, "0123456789abcdef0123456789abcdef01234567", "sub/helperbuild.yaml")
	assert.ErrorIs(t, err, ErrNoCommit, "another repository's commit")
}

// The branch, tags, root and revision come two by two from one git
// command each; every shape of HEAD gives what the one-field commands
// gave: an unborn branch (no commit), another branch at the same commit,
// an annotated tag, a detached HEAD.
func TestReadRefShapes(t *testing.T) {
	testkit.Tool(t, "git")
	ctx := context.Background()
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q", "-b", "feature/x")
	assert.Equal(t, Info{Branch: "feature/x", Toplevel: real}, Read(ctx, dir, Branch|Tags|Toplevel|Revision), "no commit yet")

	git("commit", "-q", "--allow-empty", "-m", "x")
	git("branch", "other")
	git("tag", "-a", "-m", "annotated", "v2")
	git("tag", "v1")
	info := Read(ctx, dir, Branch|Tags)
	assert.Equal(t, "feature/x", info.Branch, "the branch checked out, not the other one at HEAD")
	assert.Equal(t, []string{"v1", "v2"}, info.Tags, "annotated tags count by their commit")
	assert.Empty(t, info.Revision, "not asked")
	assert.Equal(t, Info{Tags: []string{"v1", "v2"}}, Read(ctx, dir, Tags))
	assert.Equal(t, Info{Toplevel: real}, Read(ctx, dir, Toplevel))

	git("checkout", "-q", "--detach")
	info = Read(ctx, dir, Branch|Tags|Revision)
	assert.Empty(t, info.Branch, "detached")
	assert.Equal(t, []string{"v1", "v2"}, info.Tags)
	assert.Len(t, info.Revision, 40)

	git("checkout", "-q", "other")
	git("commit", "-q", "--allow-empty", "-m", "y")
	assert.Equal(t, Info{Branch: "other"}, Read(ctx, dir, Branch|Tags), "no tag at the new commit")
}
