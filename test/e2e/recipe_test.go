//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecipePush releases the example module as GitLab does: its helperbuild.yaml (with the
// busybox base) pushed with --repo, version from the git tag. Checked: index tags, the
// per-architecture alias tags runners compute (x86_64-v1.2.3, ...), and the binaries in
// each platform's image.
func TestRecipePush(t *testing.T) {
	s := suiteFor(t)
	var rel pushedRecipe
	s.mustStep(t, "push", func(t *testing.T) { rel = s.recipeRelease(t) })
	helperRepo := strings.TrimPrefix(rel.Prefix, s.plain.Host+"/") + "/gitlab-runner-helper"
	runnerRepo := strings.TrimPrefix(rel.Prefix, s.plain.Host+"/") + "/gitlab-runner"

	s.step(t, "index tags point at the published indexes", func(t *testing.T) {
		for _, c := range []struct {
			image, repo string
			tags        []string
		}{
			{"gitlab-runner-helper", helperRepo, []string{exampleVersion}},
			{"gitlab-runner", runnerRepo, []string{exampleVersion, "latest"}},
		} {
			meta := rel.Meta.image(t, c.image)
			assert.Equal(t, s.plain.ref(c.repo), meta.Reference, "metadata reference of %s", c.image)
			assert.ElementsMatch(t, c.tags, meta.tagNames(), "metadata tags of %s", c.image)
			for _, tag := range c.tags {
				raw, digest := inspectRaw(t, s.plain, s.plain.ref(c.repo+":"+tag))
				assert.Equal(t, meta.Digest, digest.String(), "%s:%s", c.repo, tag)
				assert.Len(t, runnable(t, parseIndex(t, raw)).Manifests, len(targets), "%s:%s", c.repo, tag)
			}
		}
	})

	s.step(t, "platform tags resolve to the index entries", func(t *testing.T) {
		raw, _ := inspectRaw(t, s.plain, s.plain.ref(helperRepo+":"+exampleVersion))
		index := runnable(t, parseIndex(t, raw))
		require.Len(t, index.Manifests, len(targets))
		meta := rel.Meta.image(t, "gitlab-runner-helper")
		require.Len(t, meta.Platforms, len(targets))
		for i, tg := range targets {
			tag := tg.GitLabArch + "-" + exampleVersion // what the runner computes: x86_64-v1.2.3
			require.Equal(t, tg.Platform, platformOf(index.Manifests[i]))
			_, digest := inspectRaw(t, s.plain, s.plain.ref(helperRepo+":"+tag))
			assert.Equal(t, index.Manifests[i].Digest, digest, "tag %s", tag)
			assert.Equal(t, []string{s.plain.ref(helperRepo + ":" + tag)}, meta.Platforms[i].Tags, "metadata tags of %s", tg.Platform)
		}
	})

	for _, tg := range targets {
		s.step(t, "helper image/"+tg.slug(), func(t *testing.T) {
			rootfs := extractPlatform(t, s.plain, s.plain.ref(helperRepo+":"+exampleVersion), tg)
			assertExecutable(t, rootfs, helperBinary)
			out := runInRootfs(t, tg, rootfs, helperBinary, "--version").Stdout
			// GitLab Runner's VERSION has no "v": the tag v1.2.3 prints 1.2.3,
			// and the runner computes x86_64-v1.2.3 from it.
			assert.Equal(t, strings.TrimPrefix(exampleVersion, "v"), versionField(out, "Version"), "--version:\n%s", out)
			assert.Equal(t, "linux/"+tg.Arch, versionField(out, "OS/Arch"), "--version:\n%s", out)
		})
	}

	for _, tg := range targets {
		s.step(t, "runner image/"+tg.slug(), func(t *testing.T) {
			rootfs := extractPlatform(t, s.plain, s.plain.ref(runnerRepo+":"+exampleVersion), tg)
			assertExecutable(t, rootfs, "/usr/bin/gitlab-runner")
			assertExecutable(t, rootfs, "/usr/share/gitlab-runner/clear-docker-cache")
			out := runInRootfs(t, tg, rootfs, "/usr/bin/gitlab-runner", "--version").Stdout
			// GitLab Runner's VERSION has no "v": the tag v1.2.3 prints 1.2.3,
			// and the runner computes x86_64-v1.2.3 from it.
			assert.Equal(t, strings.TrimPrefix(exampleVersion, "v"), versionField(out, "Version"), "--version:\n%s", out)
			assert.Equal(t, "linux/"+tg.Arch, versionField(out, "OS/Arch"), "--version:\n%s", out)
		})
	}
}

// assertExecutable checks that path in rootfs is a regular file with mode 0755.
func assertExecutable(t *testing.T, rootfs, path string) {
	t.Helper()
	info, err := os.Lstat(filepath.Join(rootfs, path))
	if assert.NoError(t, err) {
		assert.True(t, info.Mode().IsRegular(), "%s is not a regular file", path)
		assert.Equal(t, os.FileMode(0o755), info.Mode().Perm(), "mode of %s", path)
	}
}
