//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigFreePush pushes the example's helper package, config-free, for five platforms
// onto the busybox base in the plain registry, then checks with skopeo, umoci and QEMU what
// the registry holds, and that pushing the same commit again changes and uploads nothing.
func TestConfigFreePush(t *testing.T) {
	s := suiteFor(t)
	var img pushedImage
	s.mustStep(t, "push", func(t *testing.T) {
		img = s.plainHelper(t)
		assert.Contains(t, img.Output.Stdout, img.Digest.String(), "stdout names the index digest")
	})

	s.step(t, "the tag is an OCI index of exactly the five platforms", func(t *testing.T) {
		raw, digest := inspectRaw(t, s.plain, img.ref())
		require.Equal(t, img.Digest, digest, "--metadata-file digest vs. registry")
		index := runnable(t, parseIndex(t, raw)) // also: no artifactType; attestations after the images
		assert.Equal(t, types.OCIImageIndex, index.MediaType)
		got := make([]string, len(index.Manifests))
		for i, m := range index.Manifests {
			got[i] = platformOf(m)
			assert.Equal(t, types.OCIManifestSchema1, m.MediaType, "entry %s", got[i])
		}
		want := strings.Split(platformList(targets), ",") // linux/arm/v7: arm with variant v7
		require.Equal(t, want, got)

		require.Len(t, img.Meta.Platforms, len(targets), "--metadata-file platforms")
		for i, p := range img.Meta.Platforms {
			assert.Equal(t, want[i], p.Platform)
			assert.Equal(t, index.Manifests[i].Digest.String(), p.Digest, "metadata digest of %s", p.Platform)
			assert.Equal(t, index.Manifests[i].Size, p.Size, "metadata size of %s", p.Platform)
		}
	})

	for _, tg := range targets {
		s.step(t, "its own binary runs under qemu/"+tg.slug(), func(t *testing.T) {
			rootfs := extractPlatform(t, s.plain, img.ref(), tg)
			info, err := os.Stat(filepath.Join(rootfs, helperBinary))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o755), info.Mode().Perm(), "mode of %s", helperBinary)
			_, err = os.Lstat(filepath.Join(rootfs, "bin", "busybox"))
			assert.NoError(t, err, "the base image's files are kept")

			out := runInRootfs(t, tg, rootfs, helperBinary, "--version").Stdout
			assert.Equal(t, "linux/"+tg.Arch, versionField(out, "OS/Arch"), "--version:\n%s", out)
			assert.Equal(t, exampleVersion, versionField(out, "Version"), "--ldflags template:\n%s", out)
		})
	}

	s.step(t, "pushing again keeps the digest and uploads no blob", func(t *testing.T) {
		proxy := startCountingProxy(t, s.plain)
		viaProxy := *s.plain
		viaProxy.Host = proxy.Host
		again := s.configFreePush(t, &viaProxy, s.plain.ref(baseRepo+":"+baseTag), img.Repo, img.Tag,
			s.helperbuildEnv(t))
		assert.Equal(t, img.Digest, again.Digest, "index digest of the second push")
		require.NotEmpty(t, proxy.all(), "helperbuild did not talk to the registry through the proxy")
		assert.Empty(t, proxy.blobUploads(), "blob uploads on the second push; all requests:\n%s",
			strings.Join(proxy.all(), "\n"))
		t.Logf("requests of the second push: %s", proxy.summary())
	})

	s.step(t, "a push to a new repository mounts the base's layers instead of uploading them", func(t *testing.T) {
		proxy := startCountingProxy(t, s.plain)
		viaProxy := *s.plain
		viaProxy.Host = proxy.Host
		// The base is read through the proxy too, so base and target are on one registry.
		s.configFreePush(t, &viaProxy, viaProxy.ref(baseRepo+":"+baseTag), "e2e/helper-mounted", img.Tag,
			s.helperbuildEnv(t))
		assert.Equal(t, len(targets), proxy.mountRequests(),
			"one busybox layer per platform is mounted from %s; requests:\n%s", baseRepo, strings.Join(proxy.all(), "\n"))
		// One PATCH and one PUT each: every platform's own layer and config, its two
		// attestation statements (SBOM, provenance), and once the 2-byte empty config the
		// attestation manifests share.
		assert.Len(t, proxy.blobUploads(), 2*2*len(targets)+2*2*len(targets)+2,
			"only each platform's own layer, config and statements are uploaded")
	})
}
