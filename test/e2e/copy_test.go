//go:build e2e

package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSkopeoCopyKeepsDigest copies the pushed index with all platforms to another
// repository using skopeo, which rewrites (and so re-digests) an index it does not fully
// understand, e.g. one with artifactType entries. A pinned digest must survive mirroring.
func TestSkopeoCopyKeepsDigest(t *testing.T) {
	s := suiteFor(t)
	img := s.plainHelper(t)
	s.step(t, "copy --all to another repository", func(t *testing.T) {
		dest := s.plain.ref("mirror/helper:" + img.Tag)
		argv := append([]string{"skopeo", "copy", "--all", "--quiet"}, s.plain.skopeoFlags("src")...)
		argv = append(argv, s.plain.skopeoFlags("dest")...)
		sh(t, append(argv, "docker://"+img.ref(), "docker://"+dest)...)
		_, digest := inspectRaw(t, s.plain, dest)
		assert.Equal(t, img.Digest, digest, "index digest after skopeo copy --all")
	})
}
