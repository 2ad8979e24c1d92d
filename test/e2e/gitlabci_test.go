//go:build e2e && gitlabci

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The GitLab CI template (ci/gitlab/release.gitlab-ci.yml) run for real: gitlab-ci-local
// with the shell executor, on a copy of the template without its image: keys, against the
// plain registry. `make ci-e2e` runs this file (build tags e2e and gitlabci).

const (
	ciTemplate             = "ci/gitlab/release.gitlab-ci.yml"
	gitlabCILocalVersion   = "4.52.2" // the last release that runs on Node 20
	ciPipelineTimeout      = 25 * time.Minute
	ciName                 = "example" // the template's name input: jobs example-build, example-release
	ciFailingPlatform      = "linux/s390x"
	ciInstallHint          = "run scripts/install-test-deps.sh gitlab-ci-local"
	dotenvVariablesAtMost  = 20 // GitLab's limit for artifacts:reports:dotenv
	ciCheckEnv, ciSingleMD = "check.env", "single.json"
	// attestationPlatform is the platform of attestation manifests in an index (BuildKit's
	// form); they are not images of a platform.
	attestationPlatform = "unknown/unknown"
)

// TestGitLabCITemplate runs the template on the example's recipe: five build jobs from
// parallel:matrix, each pushing its platform by digest into its own Go cache, the merge job
// reading their part files through needs, and a later job reading the merge's dotenv report.
// Then the same with one build job failing: nothing may be tagged.
func TestGitLabCITemplate(t *testing.T) {
	s := suiteFor(t)
	var p ciProject
	s.mustStep(t, "gitlab-ci-local and a project with the template, without image keys", func(t *testing.T) {
		requireGitLabCILocal(t)
		p = s.newCIProject(t)
	})

	prefix := s.plain.Host + "/e2e-gitlabci"
	var run ciRun
	s.mustStep(t, "pipeline: five build jobs, the merge, a job after it", func(t *testing.T) {
		run = p.run(t, ciPipeline{repo: prefix})
		require.Zero(t, run.ExitCode, "gitlab-ci-local:\n%s", run)
	})
	var merged metadataFile
	built := map[string]v1.Hash{} // "image platform" -> manifest digest, from the part files
	s.mustStep(t, "every matrix job ran and handed its part to the merge", func(t *testing.T) {
		for _, tg := range targets {
			assert.Contains(t, run.passed, ciName+"-build: ["+tg.Platform+"]")
			part := filepath.Join(p.dir, ".helperbuild", ciName, "parts", ciName+"-build-"+tg.slug()+".json")
			for image, digest := range readCIPart(t, part, tg.Platform) {
				built[image+" "+tg.Platform] = digest
			}
		}
		require.Contains(t, run.passed, ciName+"-release")
		require.Contains(t, run.passed, "check")
		// The merge was told all five platforms (--platforms from the same input as the
		// matrix) and refuses a missing one, so its success means every part reached it.
		merged = readMetadata(t, filepath.Join(p.dir, ".helperbuild", ciName, "release.json"))
		require.Len(t, merged.Images, 2, "the example has a helper and a runner image")
		for _, img := range merged.Images {
			var platforms []string
			for _, pl := range img.Platforms {
				platforms = append(platforms, pl.Platform)
			}
			assert.Equal(t, strings.Split(platformList(targets), ","), platforms, "image %s", img.Name)
		}
	})
	s.step(t, "one Go cache per platform, keys without a slash", func(t *testing.T) {
		for _, tg := range targets {
			key := "go-" + ciName + "-build-" + tg.slug()
			entries, err := os.ReadDir(filepath.Join(p.dir, ".gitlab-ci-local", "cache", key, ".cache", "go-build"))
			require.NoError(t, err, "cache %s", key)
			assert.NotEmpty(t, entries, "cache %s holds no Go build cache", key)
		}
	})
	s.step(t, "dotenv report as GitLab accepts it, seen by the next job", func(t *testing.T) {
		raw, err := os.ReadFile(filepath.Join(p.dir, ".helperbuild", ciName, "release.env"))
		require.NoError(t, err)
		report := checkDotenv(t, raw)
		seen := readEnvFile(t, filepath.Join(p.dir, ciCheckEnv))
		for key, value := range report {
			assert.Equal(t, value, seen[key], "the check job's %s", key)
		}
		values := map[string]bool{}
		for _, v := range report {
			values[v] = true
		}
		for _, img := range merged.Images {
			assert.True(t, values[img.Reference+"@"+img.Digest], "no variable is %s@%s in:\n%s", img.Reference, img.Digest, raw)
		}
	})
	s.step(t, "tags resolve to the full index, the digest of a single push", func(t *testing.T) {
		requireReleased(t, merged, built)
		single := readMetadata(t, filepath.Join(p.dir, ciSingleMD))
		for _, img := range merged.Images {
			one := single.image(t, img.Name)
			assert.Equal(t, one.Digest, img.Digest, "image %s: fan-out in CI vs one push in the same job environment", img.Name)
			// A branch pipeline (no CI_COMMIT_TAG): the template's latest input is
			// tag-pipelines, so the merge writes every tag of the push but latest.
			want := slices.DeleteFunc(one.tagNames(), func(t string) bool { return t == "latest" })
			assert.ElementsMatch(t, want, img.tagNames(), "image %s", img.Name)
		}
	})

	// GitLab does not start a job whose needs failed; the merge itself refuses a missing part
	// when a build job is allowed to fail. Either way the repository gets no tag.
	failPrefix := s.plain.Host + "/e2e-gitlabci-failed"
	failOne := fmt.Sprintf(`test "$PLATFORM" != %s || { echo "e2e: failing %s on purpose" >&2; exit 1; }`, ciFailingPlatform, ciFailingPlatform)
	s.step(t, "a build job fails: the merge does not run, nothing is tagged", func(t *testing.T) {
		run := p.run(t, ciPipeline{repo: failPrefix, setup: failOne})
		require.NotZero(t, run.ExitCode, "gitlab-ci-local:\n%s", run)
		assert.Contains(t, run.failed, ciName+"-build: ["+ciFailingPlatform+"]")
		assert.NotContains(t, run.passed, ciName+"-release")
		assert.NotContains(t, run.failed, ciName+"-release")
		requirePushedByDigest(t, filepath.Join(p.dir, ".helperbuild", ciName, "parts"), failPrefix, len(targets)-1)
		requireNoTags(t, s.plain, failPrefix)
	})
	s.step(t, "a build job fails but may: the merge refuses, nothing is tagged", func(t *testing.T) {
		run := p.run(t, ciPipeline{repo: failPrefix, setup: failOne, allowFailure: true})
		require.NotZero(t, run.ExitCode, "gitlab-ci-local:\n%s", run)
		require.Contains(t, run.failed, ciName+"-release", "gitlab-ci-local:\n%s", run)
		log, err := os.ReadFile(filepath.Join(p.dir, ".gitlab-ci-local", "output", ciName+"-release.log"))
		require.NoError(t, err)
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "helperbuild: ") {
				t.Logf("the merge said: %s", strings.TrimSpace(l))
			}
		}
		assert.Contains(t, string(log), ciFailingPlatform, "the merge's refusal names the missing platform")
		requireNoTags(t, s.plain, failPrefix)
	})
}

// ciProject is a copy of the example (a git repository tagged v1.2.3) with the template in
// ci/release.gitlab-ci.yml.
type ciProject struct {
	s   *Suite
	dir string
}

func (s *Suite) newCIProject(t *testing.T) ciProject {
	t.Helper()
	dir := filepath.Join(s.work, "gitlabci")
	sh(t, "cp", "-a", s.exampleDir(t), dir)
	raw, err := os.ReadFile(filepath.Join(s.repoRoot, ciTemplate))
	require.NoError(t, err)
	stripped, removed := withoutImageKeys(t, raw)
	require.Equal(t, 2, removed, "image: keys removed from %s", ciTemplate)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ci"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ci", "release.gitlab-ci.yml"), stripped, 0o644))
	return ciProject{s: s, dir: dir}
}

// ciPipeline is the project's .gitlab-ci.yml: the template for the example's recipe, and
// a job after the merge that keeps its environment and pushes the same release the
// one-job way for comparison.
type ciPipeline struct {
	repo         string // --repo of the release
	setup        string // the template's setup input (default: nothing to install)
	allowFailure bool   // build jobs may fail (so the merge runs anyway)
}

func (p ciProject) pipeline(pl ciPipeline) string {
	setup := pl.setup
	if setup == "" {
		setup = "true"
	}
	bin := p.s.helperbuildBin
	single := fmt.Sprintf(`%s push --config %s --repo %s/single --metadata-file "$CI_PROJECT_DIR/%s" --cache-dir "$CI_PROJECT_DIR/.single-cache"`,
		bin, e2eConfig, pl.repo, ciSingleMD)
	y := fmt.Sprintf(`stages: [build, deploy, check]
include:
  - local: ci/release.gitlab-ci.yml
    inputs:
      name: %s
      setup: %q
      helperbuild: %q
      push-args: %q
      merge-args: %q
check:
  stage: check
  needs: [%s-release]
  script:
    - env > %s
    - %q
  artifacts:
    paths: [%s, %s]
`, ciName, setup, bin, "--config "+e2eConfig+" --repo "+pl.repo, "--config "+e2eConfig,
		ciName, ciCheckEnv, single, ciCheckEnv, ciSingleMD)
	if pl.allowFailure {
		y += ciName + "-build:\n  allow_failure: true\n"
	}
	return y
}

// run writes the pipeline and runs every job with gitlab-ci-local's shell executor, each
// in its own copy of the project. Outputs of an earlier run are removed first; the cache
// (.gitlab-ci-local/cache) stays, as a runner's would.
func (p ciProject) run(t *testing.T, pl ciPipeline) ciRun {
	t.Helper()
	for _, leftover := range []string{".helperbuild", ciCheckEnv, ciSingleMD, ".single-cache"} {
		require.NoError(t, os.RemoveAll(filepath.Join(p.dir, leftover)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(p.dir, ".gitlab-ci.yml"), []byte(p.pipeline(pl)), 0o644))
	return runGitLabCILocal(t, p.s, p.dir)
}
