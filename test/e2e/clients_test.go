//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Helpers that look at images with independent clients: skopeo (registry API), umoci (OCI
// layout to root file system), QEMU (run what is inside) and ctr (containerd).

// inspectRaw returns the manifest or index stored at ref ("localhost:PORT/repo:tag" or
// "...@sha256:...") exactly as the registry serves it, and the digest of those bytes.
func inspectRaw(t *testing.T, r *registry, ref string) ([]byte, v1.Hash) {
	t.Helper()
	res := tryInspectRaw(t, r, ref)
	require.Zero(t, res.ExitCode, "skopeo inspect --raw:\n%s", res)
	raw := []byte(res.Stdout)
	digest, _, err := v1.SHA256(bytes.NewReader(raw))
	require.NoError(t, err)
	return raw, digest
}

// tryInspectRaw runs skopeo inspect --raw on ref and returns the result, failing or not.
func tryInspectRaw(t *testing.T, r *registry, ref string) result {
	t.Helper()
	argv := append([]string{"skopeo", "inspect", "--raw"}, r.skopeoFlags("")...)
	return run(t, command(t, nil, append(argv, "docker://"+ref)...))
}

// listTags returns the tags of repo in r (sorted), or nil if the repository does not exist.
func listTags(t *testing.T, r *registry, repo string) []string {
	t.Helper()
	argv := append([]string{"skopeo", "list-tags"}, r.skopeoFlags("")...)
	res := run(t, command(t, nil, append(argv, "docker://"+r.ref(repo))...))
	if res.ExitCode != 0 {
		// A repository nothing was pushed to: NAME_UNKNOWN, or a bare 404
		// when the registry knows no blob of it either.
		msg := strings.ToLower(res.Stderr)
		require.True(t, strings.Contains(msg, "unknown") || strings.Contains(msg, "404 (not found)"), "skopeo list-tags:\n%s", res)
		return nil
	}
	var out struct{ Tags []string }
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out))
	sort.Strings(out.Tags)
	return out.Tags
}

// parseIndex decodes raw as an image index. It also checks, on the raw JSON, that no
// entry has an artifactType (skopeo 1.9 drops it and so changes the digest on copy).
func parseIndex(t *testing.T, raw []byte) v1.IndexManifest {
	t.Helper()
	var index v1.IndexManifest
	require.NoError(t, json.Unmarshal(raw, &index), "index:\n%s", raw)
	var generic struct {
		Manifests []map[string]json.RawMessage `json:"manifests"`
	}
	require.NoError(t, json.Unmarshal(raw, &generic))
	for i, m := range generic.Manifests {
		require.NotContains(t, m, "artifactType", "index entry %d has an artifactType:\n%s", i, raw)
	}
	return index
}

// runnable is index without its attestation entries (BuildKit's: platform unknown/unknown,
// vnd.docker.reference.* annotations), which no runtime pulls. It checks they come after
// every platform image, one per platform image, in the same order.
func runnable(t *testing.T, index v1.IndexManifest) v1.IndexManifest {
	t.Helper()
	var images, attestations []v1.Descriptor
	for _, m := range index.Manifests {
		if m.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
			require.Equal(t, "unknown/unknown", platformOf(m))
			attestations = append(attestations, m)
			continue
		}
		require.Empty(t, attestations, "platform image %s after an attestation entry", m.Digest)
		images = append(images, m)
	}
	if len(attestations) > 0 {
		require.Len(t, attestations, len(images), "one attestation manifest per platform image")
		for i, a := range attestations {
			assert.Equal(t, images[i].Digest.String(), a.Annotations["vnd.docker.reference.digest"])
		}
	}
	index.Manifests = images
	return index
}

// parseManifest decodes raw as an image manifest.
func parseManifest(t *testing.T, raw []byte) v1.Manifest {
	t.Helper()
	var m v1.Manifest
	require.NoError(t, json.Unmarshal(raw, &m), "manifest:\n%s", raw)
	return m
}

// platformOf formats an index entry's platform as "os/arch[/variant]".
func platformOf(d v1.Descriptor) string {
	if d.Platform == nil {
		return "<none>"
	}
	p := d.Platform.OS + "/" + d.Platform.Architecture
	if d.Platform.Variant != "" {
		p += "/" + d.Platform.Variant
	}
	return p
}

// extractPlatform copies tg's image out of the multi-arch ref with skopeo into an OCI
// layout (umoci refuses an index: "tag is ambiguous"), unpacks it with umoci and returns
// the root file system.
func extractPlatform(t *testing.T, r *registry, ref string, tg target) string {
	t.Helper()
	return extractPlatformFrom(t, "docker://"+ref, r.skopeoFlags("src"), tg)
}

// extractPlatformFrom is extractPlatform for any skopeo source ("oci:DIR:TAG", ...);
// srcFlags are skopeo's --src-* flags it needs.
func extractPlatformFrom(t *testing.T, src string, srcFlags []string, tg target) string {
	t.Helper()
	dir := t.TempDir()
	argv := []string{"skopeo", "--override-os", tg.OS, "--override-arch", tg.Arch}
	if tg.Variant != "" {
		argv = append(argv, "--override-variant", tg.Variant)
	}
	argv = append(append(argv, "copy", "--quiet"), srcFlags...)
	sh(t, append(argv, src, "oci:"+filepath.Join(dir, "oci")+":image")...)
	bundle := filepath.Join(dir, "bundle")
	sh(t, "umoci", "unpack", "--image", filepath.Join(dir, "oci")+":image", bundle)
	return filepath.Join(bundle, "rootfs")
}

// runInRootfs runs the program at path (absolute, inside rootfs) under QEMU for tg, with
// rootfs as its sysroot, and returns its result.
func runInRootfs(t *testing.T, tg target, rootfs, path string, args ...string) result {
	t.Helper()
	return mustRun(t, command(t, nil, tg.emulate(rootfs, filepath.Join(rootfs, path), args...)...))
}

// ctrPull pulls ref for tg's platform only into namespace and returns the digests of all
// content the namespace then holds (ctr content ls -q).
func (c *containerd) ctrPull(t *testing.T, r *registry, namespace, ref string, tg target) []string {
	t.Helper()
	argv := append([]string{"images", "pull", "--platform", tg.Platform}, r.ctrFlags()...)
	mustRun(t, c.ctr(t, namespace, append(argv, ref)...))
	out := mustRun(t, c.ctr(t, namespace, "content", "ls", "-q")).Stdout
	content := strings.Fields(out)
	sort.Strings(content)
	return content
}

// ctrRun runs argv in a new container of the pulled image ref for tg's platform and
// returns its output. The container is removed afterwards (--rm).
func (c *containerd) ctrRun(t *testing.T, namespace, ref string, tg target, argv ...string) result {
	t.Helper()
	id := "e2e-" + tg.slug() + "-" + randomHex(4)
	args := append([]string{"run", "--rm", "--platform", tg.Platform, ref, id}, argv...)
	return mustRun(t, c.ctr(t, namespace, args...))
}

// versionField returns the value of "Name:" in gitlab-runner(-helper) --version output.
func versionField(output, name string) string {
	for _, line := range strings.Split(output, "\n") {
		if value, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
