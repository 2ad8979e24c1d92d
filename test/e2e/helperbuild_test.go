//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Running the helperbuild binary under test, as an operator or a CI job would.

// helperbuildEnv is the environment helperbuild runs with: the test binary's own without
// anything a CI job, the user's Docker set-up or a Go cross-compile setting could slip in,
// plus extra ("KEY=value"). The TLS registry's certificate is trusted via SSL_CERT_FILE, and
// DOCKER_CONFIG points at an empty directory unless extra sets it.
func (s *Suite) helperbuildEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	drop := func(key string) bool {
		switch key {
		case "DOCKER_CONFIG", "REGISTRY_AUTH_FILE", "SOURCE_DATE_EPOCH", "SSL_CERT_FILE", "SSL_CERT_DIR",
			"GOOS", "GOARCH", "GOARM", "GOAMD64", "CGO_ENABLED",
			"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy":
			return true
		}
		return strings.HasPrefix(key, "CI_") || strings.HasPrefix(key, "GITLAB_")
	}
	var env []string
	for _, kv := range os.Environ() {
		if key, _, _ := strings.Cut(kv, "="); !drop(key) {
			env = append(env, kv)
		}
	}
	emptyDockerConfig := t.TempDir()
	env = append(env, "DOCKER_CONFIG="+emptyDockerConfig, "SSL_CERT_FILE="+s.secure.CertFile)
	return append(env, extra...) // later entries win in os/exec
}

// helperbuild runs the binary under test with args in dir and env (see helperbuildEnv) and
// returns its result whatever the exit code.
func (s *Suite) helperbuild(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	if s.helperbuildErr != nil {
		t.Fatalf("helperbuild could not be built:\n%v", s.helperbuildErr)
	}
	cmd := command(t, env, append([]string{s.helperbuildBin}, args...)...)
	cmd.Dir = dir
	return run(t, cmd)
}

// mustHelperbuild is helperbuild that requires exit code 0.
func (s *Suite) mustHelperbuild(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	res := s.helperbuild(t, dir, env, args...)
	require.Zero(t, res.ExitCode, "helperbuild failed:\n%s", res)
	return res
}

// metadataFile is what --metadata-file FILE contains.
type metadataFile struct {
	Images []metadataImage `json:"images"`
}

type metadataImage struct {
	Name      string             `json:"name"`
	Reference string             `json:"reference"`
	Digest    string             `json:"digest"` // of the image index
	Tags      []string           `json:"tags"`
	Platforms []metadataPlatform `json:"platforms"`
	// Signatures: push --sign's.
	Signatures []metadataSignature `json:"signatures"`
}

type metadataSignature struct {
	Subject string `json:"subject"`
	Format  string `json:"format"`
	Digest  string `json:"digest"`
	Tag     string `json:"tag"`
	Signer  string `json:"signer"`
}

type metadataPlatform struct {
	Platform     string               `json:"platform"` // "linux/arm/v7"
	Digest       string               `json:"digest"`   // of the platform's manifest
	Size         int64                `json:"size"`
	Tags         []string             `json:"tags"`
	Attestations *metadataAttestation `json:"attestations"`
}

// metadataAttestation names a platform's attestations by digest.
type metadataAttestation struct {
	SBOM       string   `json:"sbom"`       // the SBOM statement
	Provenance string   `json:"provenance"` // the provenance statement
	Manifest   string   `json:"manifest"`   // --attest index: the attestation manifest
	Referrers  []string `json:"referrers"`  // --attest referrers
}

// readMetadata decodes a --metadata-file and checks it is well-formed.
func readMetadata(t *testing.T, path string) metadataFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err, "helperbuild did not write --metadata-file")
	var md metadataFile
	require.NoError(t, json.Unmarshal(raw, &md), "metadata file:\n%s", raw)
	require.NotEmpty(t, md.Images, "metadata file lists no images:\n%s", raw)
	for _, img := range md.Images {
		require.True(t, strings.HasPrefix(img.Digest, "sha256:"), "image %q digest %q in:\n%s", img.Name, img.Digest, raw)
	}
	return md
}

// tagNames returns the image's tags as bare tag names ("v1.2.3"), whether the metadata
// lists them so or as full references ("registry/group/image:v1.2.3").
func (img metadataImage) tagNames() []string {
	names := make([]string, len(img.Tags))
	for i, tag := range img.Tags {
		names[i] = strings.TrimPrefix(tag, img.Reference+":")
	}
	return names
}

// image returns the metadata entry named name (or the only one, if name is empty).
func (md metadataFile) image(t *testing.T, name string) metadataImage {
	t.Helper()
	if name == "" {
		require.Len(t, md.Images, 1)
		return md.Images[0]
	}
	for _, img := range md.Images {
		if img.Name == name {
			return img
		}
	}
	t.Fatalf("metadata has no image %q: %+v", name, md.Images)
	return metadataImage{}
}

// metadataPath is a fresh path for --metadata-file.
func metadataPath(t *testing.T) string { return filepath.Join(t.TempDir(), "metadata.json") }
