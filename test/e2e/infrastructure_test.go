//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInfrastructure checks the suite's own environment without helperbuild: the busybox
// base image reached both registries intact and every platform of it runs, under QEMU
// directly and in containerd. If this fails, fix the environment before reading any other
// failure.
func TestInfrastructure(t *testing.T) {
	s := suiteFor(t)

	s.step(t, "base index in the plain registry", func(t *testing.T) {
		raw, digest := inspectRaw(t, s.plain, s.plain.ref(baseRepo+":"+baseTag))
		require.Equal(t, s.base.Digest, digest)
		index := parseIndex(t, raw)
		require.Len(t, index.Manifests, len(targets))
		for i, tg := range targets {
			assert.Equal(t, tg.Platform, platformOf(index.Manifests[i]))
		}
	})

	for _, tg := range targets {
		s.step(t, "busybox runs under qemu/"+tg.slug(), func(t *testing.T) {
			rootfs := extractPlatform(t, s.plain, s.plain.ref(baseRepo+":"+baseTag), tg)
			out := runInRootfs(t, tg, rootfs, "/bin/busybox", "uname", "-m")
			assert.Equal(t, tg.Machine, strings.TrimSpace(out.Stdout))
		})
	}

	for _, r := range []*registry{s.plain, s.secure} {
		for _, tg := range targets {
			s.step(t, "busybox runs in containerd/"+r.Name+"/"+tg.slug(), func(t *testing.T) {
				ns := "infra-" + r.Name + "-" + tg.slug()
				ref := r.ref(baseRepo + ":" + baseTag)
				content := s.containerd.ctrPull(t, r, ns, ref, tg)
				// index + manifest + config + one layer: this platform only
				assert.Len(t, content, 4, "content after pulling %s", tg.Platform)
				out := s.containerd.ctrRun(t, ns, ref, tg, "uname", "-m")
				assert.Equal(t, tg.Machine, strings.TrimSpace(out.Stdout))
			})
		}
	}
}
