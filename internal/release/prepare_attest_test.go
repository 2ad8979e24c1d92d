package release

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/gitmeta"
)

// The attestations ask git only what neither the flags nor the job say:
// the root always, the ref's ingredients outside a job that names its tag
// or branch, the remote without --source (each git start costs the run's
// start milliseconds).
func TestAttestGitAsksOnlyWhatIsNotGiven(t *testing.T) {
	ref := gitmeta.Tags | gitmeta.Revision | gitmeta.Branch
	for _, tt := range []struct {
		name  string
		ci    CI
		given Given
		want  gitmeta.Field
	}{
		{"outside CI, nothing given", CI{}, Given{}, gitmeta.Toplevel | ref | gitmeta.Remote},
		{"outside CI, --source", CI{}, Given{Source: "https://gitlab.example.com/g/p"}, gitmeta.Toplevel | ref},
		{"a tag pipeline", CI{CommitTag: "v1.2.3"}, Given{}, gitmeta.Toplevel | gitmeta.Remote},
		{"a branch pipeline with --source", CI{CommitBranch: "main"}, Given{Source: "https://gitlab.example.com/g/p"}, gitmeta.Toplevel},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.ci.attestGit(tt.given))
		})
	}
}

// When every name of the release is given, the start asks git nothing:
// what the attestations name of the checkout (its root, the ref) is asked
// by AttestOptions.Complete, which the build runs beside the compiles.
// What it fills in is what asking at once gives when a name is missing.
func TestAttestCheckoutAskedBesideTheCompilesWhenNamesAreGiven(t *testing.T) {
	repo := t.TempDir()
	gitIn := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.Output()
		require.NoError(t, err, "git %v", args)
		return strings.TrimSpace(string(out))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "app", "cmd", "hello"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "app", "cmd", "hello", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	gitIn("init", "-q")
	gitIn("add", ".")
	gitIn("commit", "-q", "-m", "hello")
	gitIn("tag", "v1.2.3")
	rev := gitIn("rev-parse", "HEAD")
	t.Chdir(filepath.Join(repo, "app")) // the package's module: not the checkout's root

	prepare := func(g Given) *Prepared {
		t.Helper()
		p, err := Prepare(context.Background(), Request{Command: "build", Package: Package{Main: "./cmd/hello", Base: "scratch"},
			Platforms: platforms(t, "linux/amd64"), Output: "oci:" + filepath.Join(t.TempDir(), "out"), Given: g,
			Attest: AttestRequest{Mode: "index"}, CacheDir: t.TempDir(), HelperbuildVersion: "test"})
		require.NoError(t, err)
		return p
	}
	given := Given{Version: "v1.2.3", Revision: rev, Branch: "main", Source: "https://gitlab.example.com/g/p", Epoch: "1700000000"}

	all := prepare(given)
	require.NotNil(t, all.AttestOptions.Complete, "every name given: git is asked later")
	assert.Zero(t, all.AttestOptions.Source.Ref, "nothing of the checkout is known before Complete")
	assert.Nil(t, all.AttestOptions.Package)
	later := all.AttestOptions
	require.NoError(t, later.Complete(context.Background(), &later))

	noVersion := given
	noVersion.Version = ""
	now := prepare(noVersion) // git asked at once: the version names the tag at HEAD
	assert.Nil(t, now.AttestOptions.Complete, "a name missing: one round of git at the start answers both")

	assert.Equal(t, "refs/tags/v1.2.3", later.Source.Ref, "the tag at HEAD that the version names")
	assert.Equal(t, rev, later.Source.Commit)
	require.NotNil(t, later.Package)
	assert.Equal(t, "app/cmd/hello", later.Package.Path, "the package under the checkout's root")
	assert.Equal(t, now.AttestOptions.Source, later.Source)
	assert.Equal(t, now.AttestOptions.Package, later.Package)
}
