//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// Fixtures: the example module as a git repository, and images pushed by helperbuild that
// several tests inspect. Each is made by the first test that asks for it.

const (
	exampleVersion = "v1.2.3" // the git tag of the example copy
	helperPackage  = "./apps/gitlab-runner-helper"
	helperBinary   = "/usr/bin/gitlab-runner-helper"
	// e2eConfig is the example's helperbuild.yaml with BASE_IMAGE pointed at the busybox base.
	e2eConfig = "helperbuild.e2e.yaml"
	// exampleLdflags stamps the version into the helper in config-free mode, like the recipe.
	exampleLdflags = "-X example.com/gitlab-runner/common.VERSION={{.Version}}"
)

// exampleDir returns a copy of examples/gitlab-runner that is a git repository with one
// commit tagged v1.2.3, so helperbuild takes version, revision and epoch from git. It also
// holds e2eConfig. Tests must not change it: they share it.
func (s *Suite) exampleDir(t *testing.T) string {
	t.Helper()
	return s.example.get(t, "example copy", func(t *testing.T) string {
		require.NotEmpty(t, s.repoRoot, "helperbuild module root unknown: %v", s.helperbuildErr)
		dir := filepath.Join(s.work, "example")
		sh(t, "cp", "-a", filepath.Join(s.repoRoot, "examples", "gitlab-runner"), dir)
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "out")))
		writeE2EConfig(t, filepath.Join(dir, "helperbuild.yaml"), filepath.Join(dir, e2eConfig),
			s.plain.ref(baseRepo+":"+baseTag))

		env := fixedGitEnv(fixtureCommitDate)
		git := func(args ...string) {
			cmd := command(t, env, append([]string{"git", "-C", dir}, args...)...)
			mustRun(t, cmd)
		}
		git("init", "-q", "-b", "main")
		git("add", "-A")
		git("commit", "-q", "-m", "example")
		git("tag", "-a", exampleVersion, "-m", exampleVersion)
		return dir
	})
}

// fixtureCommitDate is the date of the fixtures' commits.
const fixtureCommitDate = "2025-01-02T03:04:05Z"

// fixedGitEnv is the environment for git commands that make commits: a fixed identity and
// date make the commit, and so the images, the same every run.
func fixedGitEnv(date string) []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.invalid", "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.invalid", "GIT_COMMITTER_DATE="+date)
}

// writeE2EConfig copies the recipe at src to dst with every image's BASE_IMAGE argument set
// to base. It edits the YAML tree, so everything else stays as the example has it.
func writeE2EConfig(t *testing.T, src, dst, base string) {
	t.Helper()
	raw, err := os.ReadFile(src)
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	root := doc.Content[0]
	images := mappingValue(root, "images")
	require.NotNil(t, images, "%s has no images", src)
	changed := 0
	for _, img := range images.Content {
		if args := mappingValue(img, "args"); args != nil {
			if v := mappingValue(args, "BASE_IMAGE"); v != nil {
				v.Value, v.Style = base, yaml.DoubleQuotedStyle
				changed++
			}
		}
	}
	require.NotZero(t, changed, "no BASE_IMAGE argument in %s", src)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	require.NoError(t, enc.Encode(&doc))
	require.NoError(t, os.WriteFile(dst, out.Bytes(), 0o644))
}

// mappingValue returns the value node of key in the YAML mapping m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// pushedImage is an image helperbuild pushed in config-free mode.
type pushedImage struct {
	Registry *registry
	Repo     string // "e2e/helper"
	Tag      string
	Digest   v1.Hash // of the image index, from --metadata-file
	Meta     metadataImage
	Output   result
}

// ref is the tag reference the image was pushed to.
func (p pushedImage) ref() string { return p.Registry.ref(p.Repo + ":" + p.Tag) }

// configFreePush runs `helperbuild push` of the example's helper package for all five
// targets onto base, tagging r/repo:tag, with env (see helperbuildEnv); extra flags go
// before the package.
func (s *Suite) configFreePush(t *testing.T, r *registry, base, repo, tag string, env []string, extra ...string) pushedImage {
	t.Helper()
	md := metadataPath(t)
	args := []string{"push", "--platforms", platformList(targets), "--base", base,
		"--ldflags", exampleLdflags, "--tag", r.ref(repo + ":" + tag), "--metadata-file", md}
	args = append(append(args, extra...), helperPackage)
	res := s.mustHelperbuild(t, s.exampleDir(t), env, args...)
	meta := readMetadata(t, md).image(t, "")
	digest, err := v1.NewHash(meta.Digest)
	require.NoError(t, err)
	return pushedImage{Registry: r, Repo: repo, Tag: tag, Digest: digest, Meta: meta, Output: res}
}

// plainHelper is the helper pushed config-free to the plain registry onto the busybox base
// (from the registry), tagged e2e/helper:v1.2.3. Tests 1, 2, 4 and 7 look at it.
func (s *Suite) plainHelper(t *testing.T) pushedImage {
	t.Helper()
	return s.plainHelperImage.get(t, "config-free helper in the plain registry", func(t *testing.T) pushedImage {
		return s.configFreePush(t, s.plain, s.plain.ref(baseRepo+":"+baseTag), "e2e/helper", exampleVersion,
			s.helperbuildEnv(t))
	})
}

// pushedRecipe is the example's release pushed in recipe mode.
type pushedRecipe struct {
	Registry *registry
	Prefix   string // --repo: "localhost:PORT/group"
	Meta     metadataFile
	Output   result
}

// recipeRelease pushes the example's recipe (e2eConfig: busybox base) to the plain
// registry with --repo localhost:PORT/group.
func (s *Suite) recipeRelease(t *testing.T) pushedRecipe {
	t.Helper()
	return s.recipeReleased.get(t, "recipe release in the plain registry", func(t *testing.T) pushedRecipe {
		prefix := s.plain.Host + "/group"
		md := metadataPath(t)
		res := s.mustHelperbuild(t, s.exampleDir(t), s.helperbuildEnv(t),
			"push", "--config", e2eConfig, "--repo", prefix, "--metadata-file", md)
		return pushedRecipe{Registry: s.plain, Prefix: prefix, Meta: readMetadata(t, md), Output: res}
	})
}
