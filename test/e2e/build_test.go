//go:build e2e

package e2e

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuildToOCILayout builds config-free without any registry: the base from the suite's
// OCI layout (--base oci:DIR:TAG), the result into an OCI layout and an OCI archive, read
// back with skopeo and umoci and checked with helperbuild verify.
func TestBuildToOCILayout(t *testing.T) {
	s := suiteFor(t)
	out := t.TempDir()
	layoutDir, archive := filepath.Join(out, "oci"), filepath.Join(out, "helper.tar")
	var layoutDigest v1.Hash

	s.mustStep(t, "build into an OCI layout", func(t *testing.T) {
		s.mustHelperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "build",
			"--platforms", platformList(targets), "--base", s.base.ociRef(), "--ldflags", exampleLdflags,
			"--output", "oci:"+layoutDir, "--tag", exampleVersion, helperPackage)
		raw := sh(t, "skopeo", "inspect", "--raw", "oci:"+layoutDir+":"+exampleVersion).Stdout
		var err error
		layoutDigest, _, err = v1.SHA256(bytes.NewReader([]byte(raw)))
		require.NoError(t, err)
		got := []string{}
		for _, m := range runnable(t, parseIndex(t, []byte(raw))).Manifests {
			got = append(got, platformOf(m))
		}
		assert.Equal(t, strings.Split(platformList(targets), ","), got)
	})

	for _, tg := range targets {
		s.step(t, "layout image runs under qemu/"+tg.slug(), func(t *testing.T) {
			rootfs := extractPlatformFrom(t, "oci:"+layoutDir+":"+exampleVersion, nil, tg)
			assertExecutable(t, rootfs, helperBinary)
			out := runInRootfs(t, tg, rootfs, helperBinary, "--version").Stdout
			assert.Equal(t, "linux/"+tg.Arch, versionField(out, "OS/Arch"), "--version:\n%s", out)
		})
	}

	s.step(t, "helperbuild verify reads the layout", func(t *testing.T) {
		res := s.helperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "verify", "--run",
			"--platforms", platformList(targets), "oci:"+layoutDir+":"+exampleVersion)
		assert.Zero(t, res.ExitCode, "verify:\n%s", res)
	})

	s.step(t, "an OCI archive holds the same index", func(t *testing.T) {
		s.mustHelperbuild(t, s.exampleDir(t), s.helperbuildEnv(t), "build",
			"--platforms", platformList(targets), "--base", s.base.ociRef(), "--ldflags", exampleLdflags,
			"--output", "oci-archive:"+archive, "--tag", exampleVersion, helperPackage)
		raw := sh(t, "skopeo", "inspect", "--raw", "oci-archive:"+archive+":"+exampleVersion).Stdout
		digest, _, err := v1.SHA256(bytes.NewReader([]byte(raw)))
		require.NoError(t, err)
		assert.Equal(t, layoutDigest, digest, "same inputs, same index, whatever the output")
	})
}
