package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helperbuild/helperbuild/internal/fixture/sandboxtest"
)

// --max-layers-size bounds what verify decompresses, without --run too: a
// larger image is a failed arch check, not an error.
func TestVerifyMaxLayersSize(t *testing.T) {
	dir := writeLayout(t, sandboxtest.Index(t, sandboxtest.BigImage(t, linuxAmd64, 3, 1<<20), sandboxtest.BigImage(t, linuxArm64, 3, 1<<20)))
	code, stdout, stderr := run(t, baseEnv(), "verify", "--platforms", "linux/amd64,linux/arm64", "--max-layers-size", "2MiB", "oci:"+dir)
	assert.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "linux/amd64,linux/arm64 arch: FAIL: the image's layers decompress to more than the 2.0 MiB allowed (--max-layers-size): the image's files were not checked")
	assert.Contains(t, stderr, "failed verification")

	code, stdout, stderr = run(t, baseEnv(), "verify", "--platforms", "linux/amd64,linux/arm64", "oci:"+dir)
	assert.Equal(t, 0, code, "the default bound is far above 3 MiB:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
}
