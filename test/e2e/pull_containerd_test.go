//go:build e2e

package e2e

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContainerdPullsOnlyItsPlatform is what a node of a mixed cluster does: containerd
// pulls the multi-arch tag for its own platform, fetches only that platform's manifest,
// config and layers, and the helper in the container reports that platform.
func TestContainerdPullsOnlyItsPlatform(t *testing.T) {
	s := suiteFor(t)
	img := s.plainHelper(t)
	raw, _ := inspectRaw(t, s.plain, img.ref())
	index := runnable(t, parseIndex(t, raw))
	require.Len(t, index.Manifests, len(targets))

	for i, tg := range targets {
		s.step(t, tg.slug(), func(t *testing.T) {
			entry := index.Manifests[i]
			require.Equal(t, tg.Platform, platformOf(entry))

			// Expected content: the index, this platform's manifest, its config and layers.
			manifestRaw, _ := inspectRaw(t, s.plain, s.plain.ref(img.Repo+"@"+entry.Digest.String()))
			manifest := parseManifest(t, manifestRaw)
			want := []string{img.Digest.String(), entry.Digest.String(), manifest.Config.Digest.String()}
			for _, l := range manifest.Layers {
				want = append(want, l.Digest.String())
			}
			sort.Strings(want)

			// A fresh namespace per platform: containerd keeps images and content per namespace.
			ns := "pull-" + tg.slug()
			got := s.containerd.ctrPull(t, s.plain, ns, img.ref(), tg)
			assert.Equal(t, want, got, "ctr content ls -q after pulling %s", tg.Platform)

			out := s.containerd.ctrRun(t, ns, img.ref(), tg, "sh", "-c", "gitlab-runner-helper --version").Stdout
			assert.Equal(t, "linux/"+tg.Arch, versionField(out, "OS/Arch"), "--version in containerd:\n%s", out)
		})
	}
}
