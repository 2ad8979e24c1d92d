//go:build e2e && gitlabci

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// projectTag is the tag the project's own tag pipeline runs for.
const projectTag = "v9.9.9"

// projectTestJobs are the jobs of the test stage: `make unit` and `make e2e`, which this suite
// runs itself. Dropped from the copy, as the build jobs (no needs:) would wait for them.
var projectTestJobs = []string{"unit", "e2e"}

// TestProjectPipeline runs helperbuild's own .gitlab-ci.yml as a tag pipeline would, with
// gitlab-ci-local, up to its verify job: helperbuild released config-free onto the busybox
// base and the example from its recipe, each fanned out by the template, then verify reading
// both dotenv reports. The test stage is left out (projectTestJobs).
// Jobs use the machine's Go caches (passed as pipeline variables, which win over the jobs'
// own) and no module proxy.
func TestProjectPipeline(t *testing.T) {
	s := suiteFor(t)
	var dir string
	s.mustStep(t, "a copy of this repository, without image keys, one commit", func(t *testing.T) {
		requireGitLabCILocal(t)
		dir = s.projectCopy(t)
	})
	prefix := s.plain.Host + "/e2e-project"
	var run ciRun
	s.mustStep(t, "tag pipeline up to verify", func(t *testing.T) {
		gocache := strings.TrimSpace(sh(t, "go", "env", "GOCACHE").Stdout)
		gomodcache := strings.TrimSpace(sh(t, "go", "env", "GOMODCACHE").Stdout)
		run = runGitLabCILocal(t, s, dir, "--needs", "verify",
			"--variable", "CI_COMMIT_TAG="+projectTag,
			"--variable", "RELEASE_REPO="+prefix,
			"--variable", "HELPERBUILD_BASE="+s.plain.ref(baseRepo+":"+baseTag),
			"--variable", "GOCACHE="+gocache, "--variable", "GOMODCACHE="+gomodcache)
		require.Zero(t, run.ExitCode, "gitlab-ci-local:\n%s", run)
	})
	s.step(t, "both releases fanned out, merged, verified", func(t *testing.T) {
		for _, name := range []string{"helperbuild", "example"} {
			for _, tg := range targets {
				assert.Contains(t, run.passed, name+"-build: ["+tg.Platform+"]")
			}
			assert.Contains(t, run.passed, name+"-release")
		}
		assert.Contains(t, run.passed, "verify")
		assert.NotContains(t, run.passed, "unit")
	})
	s.step(t, "tags resolve to the full indexes", func(t *testing.T) {
		self := readMetadata(t, filepath.Join(dir, ".helperbuild", "helperbuild", "release.json"))
		img := self.image(t, "")
		assert.Equal(t, prefix+"/helperbuild", img.Reference)
		assert.ElementsMatch(t, []string{projectTag, "latest"}, img.tagNames())
		requireReleased(t, self, nil)
		// The config-free jobs were told the whole release (--release-platforms from the
		// platforms input), so each part, and each job's provenance, names all five.
		parts, err := filepath.Glob(filepath.Join(dir, ".helperbuild", "helperbuild", "parts", "*.json"))
		require.NoError(t, err)
		require.Len(t, parts, len(targets))
		for _, p := range parts {
			raw, err := os.ReadFile(p)
			require.NoError(t, err)
			var part struct{ Platforms []string }
			require.NoError(t, json.Unmarshal(raw, &part), "%s", p)
			assert.Equal(t, strings.Split(platformList(targets), ","), part.Platforms, "release platforms of %s", p)
		}

		example := readMetadata(t, filepath.Join(dir, ".helperbuild", "example", "release.json"))
		require.Len(t, example.Images, 2)
		for _, img := range example.Images {
			assert.True(t, strings.HasPrefix(img.Reference, prefix+"/example/"), "%s", img.Reference)
		}
		requireReleased(t, example, nil)
	})
}

// projectCopy copies the files git tracks in this repository (as they are in the working
// tree) to a new git repository with one commit tagged projectTag, with the image: keys
// removed from the pipeline and the template and the test stage's jobs from the pipeline.
func (s *Suite) projectCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(s.work, "project")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	files := strings.Split(strings.TrimRight(sh(t, "git", "-C", s.repoRoot, "ls-files", "-z").Stdout, "\x00"), "\x00")
	require.Contains(t, files, ".gitlab-ci.yml")
	// cp --parents keeps the relative paths; run in the repository root.
	cp := command(t, nil, append([]string{"cp", "--parents", "-t", dir}, files...)...)
	cp.Dir = s.repoRoot
	mustRun(t, cp)
	for file, images := range map[string]int{".gitlab-ci.yml": 1, ciTemplate: 2} {
		path := filepath.Join(dir, file)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var drop []string
		if file == ".gitlab-ci.yml" {
			drop = projectTestJobs
		}
		stripped, removed := withoutImageKeys(t, raw, drop...)
		require.Equal(t, images, removed, "image: keys removed from %s", file)
		require.NoError(t, os.WriteFile(path, stripped, 0o644))
	}
	env := fixedGitEnv(fixtureCommitDate)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "project"},
		{"tag", "-a", projectTag, "-m", projectTag}} {
		mustRun(t, command(t, env, append([]string{"git", "-C", dir}, args...)...))
	}
	return dir
}
