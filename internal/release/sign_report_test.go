package release

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/sign"
)

func hexDigest(i int) string { return fmt.Sprintf("sha256:%064x", i) }

// signedImage is a two-platform image whose index and platforms were
// signed by who: signature manifests 0x10+i of subject i.
func signedImage(who sign.Who) ReportImage {
	idx, _ := v1.NewHash(hexDigest(1))
	img := ReportImage{Reference: "registry.example.com/group/gitlab-runner-helper", Pinned: "registry.example.com/group/gitlab-runner-helper@" + idx.String(),
		Tag: "registry.example.com/group/gitlab-runner-helper:v17.10.0", SignedBy: who.String(), SignedAs: &who, PlatformTags: [][]string{{}, {}}}
	img.Name, img.Digest = "gitlab-runner-helper", idx
	for i, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}} {
		d, _ := v1.NewHash(hexDigest(2 + i))
		img.Platforms = append(img.Platforms, product.Platform{Platform: p, Digest: d})
	}
	for i := 1; i <= 3; i++ {
		img.Signatures = append(img.Signatures, Signature{Subject: hexDigest(i), Format: "bundle", Digest: hexDigest(0x10 + i)})
	}
	return img
}

// TestSignatureOutputs: the dotenv file names the index's signature and
// the signer (key fingerprint, or keyless identity and issuer), the
// metadata file every signature with its signer, the summary every
// signature's digest.
func TestSignatureOutputs(t *testing.T) {
	keyed := sign.Who{Key: "sha256:" + strings.Repeat("ab", 32)}
	keyless := sign.Who{Identity: "https://gitlab.com/group/project//.gitlab-ci.yml@refs/tags/v17.10.0", Issuer: "https://gitlab.com"}

	rep := &Report{Where: InRegistry, Images: []ReportImage{signedImage(keyed)}}
	data, err := rep.Dotenv("--dotenv x")
	require.NoError(t, err)
	assert.Equal(t, `GITLAB_RUNNER_HELPER_IMAGE=registry.example.com/group/gitlab-runner-helper@`+hexDigest(1)+`
GITLAB_RUNNER_HELPER_TAG=registry.example.com/group/gitlab-runner-helper:v17.10.0
GITLAB_RUNNER_HELPER_SIGNATURE=registry.example.com/group/gitlab-runner-helper@`+hexDigest(0x11)+`
GITLAB_RUNNER_HELPER_SIGNER=`+keyed.Key+`
`, string(data))

	rep = &Report{Where: InRegistry, Images: []ReportImage{signedImage(keyless)}}
	data, err = rep.Dotenv("--dotenv x")
	require.NoError(t, err)
	assert.Contains(t, string(data), "\nGITLAB_RUNNER_HELPER_SIGNER="+keyless.Identity+"\nGITLAB_RUNNER_HELPER_SIGNER_ISSUER=https://gitlab.com\n")

	raw, err := json.Marshal(rep.Metadata())
	require.NoError(t, err)
	var m struct {
		Images []struct {
			Signatures []map[string]string `json:"signatures"`
		} `json:"images"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Len(t, m.Images[0].Signatures, 3)
	assert.Equal(t, map[string]string{"subject": hexDigest(2), "format": "bundle", "digest": hexDigest(0x12),
		"signer": keyless.String(), "identity": keyless.Identity, "issuer": keyless.Issuer}, m.Images[0].Signatures[1])

	assert.Equal(t, []string{
		"index        bundle " + hexDigest(0x11),
		"linux/amd64  bundle " + hexDigest(0x12),
		"linux/arm64  bundle " + hexDigest(0x13),
	}, rep.Images[0].SignatureDigests())
}

// TestDotenvLimitsCountSignatureKeys: a signed release needs more
// variables, and is refused before anything is built when they exceed
// GitLab's limit.
func TestDotenvLimitsCountSignatureKeys(t *testing.T) {
	keyless := &sign.Who{Identity: "x", Issuer: "y"}
	var images []dotenvImage
	for i := range 4 {
		images = append(images, dotenvImage{name: fmt.Sprintf("img%d", i), tagged: true, signer: keyless})
	}
	path := filepath.Join(t.TempDir(), "release.env")
	require.NoError(t, checkDotenvFile(path, images), "4 images x 5 variables")
	images = append(images, dotenvImage{name: "img4", tagged: true, signer: keyless})
	err := checkDotenvFile(path, images)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "5 images need 25 variables, more than the 20 GitLab accepts in one dotenv report; select at most 4 images")
}

// TestSignRequestFiles: release reads the key and trusted-root files the
// command names, and a missing one is bad input naming the flag and the
// reason (an env:// key is the command's: TestSignKeyFromEnv).
func TestSignRequestFiles(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "cosign.key")
	_, _, err := (&SignRequest{KeyName: missing}).signing(Registry{})
	var input *InputError
	require.ErrorAs(t, err, &input)
	assert.Equal(t, "--sign-key "+missing+": no such file or directory", err.Error())

	_, err = SignatureRequest{TrustedRootFile: missing, Identity: "x", Issuer: "y"}.policy()
	require.ErrorAs(t, err, &input)
	assert.Equal(t, "--trusted-root "+missing+": no such file or directory", err.Error())
	_, err = SignatureRequest{KeyFile: missing}.policy()
	assert.EqualError(t, err, "--key "+missing+": no such file or directory")
}

// TestSignatureSummaryNamesAttestations: the summary says what each signed
// digest is, an attestation manifest too, and the line above counts each
// kind (issue 39: "signed: 7 bundle (the index and each manifest)" listed
// attestation manifests by bare digest).
func TestSignatureSummaryNamesAttestations(t *testing.T) {
	img := signedImage(sign.Who{Key: "sha256:" + strings.Repeat("ab", 32)})
	var adds []mutate.IndexAddendum
	for i, p := range img.Platforms {
		att, err := random.Image(64, 1)
		require.NoError(t, err)
		d, err := att.Digest()
		require.NoError(t, err)
		adds = append(adds, mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{attestspec.AnnotationReferenceType: attestspec.ReferenceTypeAttestation,
				attestspec.AnnotationReferenceDigest: p.Digest.String()}}})
		img.Signatures = append(img.Signatures, Signature{Subject: d.String(), Format: "bundle", Digest: hexDigest(0x20 + i)})
	}
	img.Index = mutate.AppendManifests(empty.Index, adds...)
	assert.Equal(t, "signed: 5 bundle (the index, 2 platform manifests, 2 attestation manifests) by key sha256:"+strings.Repeat("ab", 32), img.SignatureLine())
	assert.Equal(t, []string{
		"index                        bundle " + hexDigest(0x11),
		"linux/amd64                  bundle " + hexDigest(0x12),
		"linux/arm64                  bundle " + hexDigest(0x13),
		"attestations of linux/amd64  bundle " + hexDigest(0x20),
		"attestations of linux/arm64  bundle " + hexDigest(0x21),
	}, img.SignatureDigests())
}
