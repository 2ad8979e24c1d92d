package release

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/sign"
)

// MetadataSchemaVersion is the version of the --metadata-file format
// (docs/metadata.md). It changes only when a field changes meaning or
// goes; new fields keep it.
const MetadataSchemaVersion = 1

// Metadata is the --metadata-file format of build, push and merge.
type Metadata struct {
	SchemaVersion int             `json:"schemaVersion"`
	Images        []MetadataImage `json:"images"`
}

// MetadataImage is one image of Metadata.
type MetadataImage struct {
	Name string `json:"name"`
	// Reference is where the image is: a registry repository, or the
	// layout reference of its first entry.
	Reference string `json:"reference"`
	// Digest is the image index's; absent for a push --by-digest job,
	// whose share of the index is never pushed (merge's is the release's).
	Digest string `json:"digest,omitempty"`
	// Tags are the full references of the tags that point at the index.
	Tags      []string           `json:"tags"`
	Contract  string             `json:"contract,omitempty"`
	Platforms []MetadataPlatform `json:"platforms"`
	// Signatures are those push --sign or merge --sign wrote.
	Signatures []MetadataSignature `json:"signatures,omitempty"`
}

// MetadataPlatform is one platform of a MetadataImage.
type MetadataPlatform struct {
	Platform string `json:"platform"`
	Digest   string `json:"digest"`
	// Size is the manifest's own size, as its index entry gives it.
	Size int64 `json:"size"`
	// CompressedSize is config plus layers: what a pull downloads.
	CompressedSize int64    `json:"compressedSize"`
	Tags           []string `json:"tags"`
	// Attestations name the platform's SBOM and provenance by digest
	// (absent with --attest none).
	Attestations *MetadataAttestation `json:"attestations,omitempty"`
}

// MetadataAttestation names a platform's attestations by digest: the
// statements, and the manifests that carry them (the attestation
// manifest in the index, or the referrers).
type MetadataAttestation struct {
	SBOM       string   `json:"sbom,omitempty"`
	Provenance string   `json:"provenance,omitempty"`
	Manifest   string   `json:"manifest,omitempty"`
	Referrers  []string `json:"referrers,omitempty"`
}

func attestationMetadata(at *product.Attestation) *MetadataAttestation {
	if at == nil {
		return nil
	}
	d := at.Digests
	str := func(h v1.Hash) string {
		if h == (v1.Hash{}) {
			return ""
		}
		return h.String()
	}
	m := &MetadataAttestation{SBOM: str(d.SBOM), Provenance: str(d.Provenance), Manifest: str(d.Manifest)}
	for _, r := range d.Referrers {
		m.Referrers = append(m.Referrers, r.String())
	}
	return m
}

// Metadata is rep as the metadata file describes it.
func (rep *Report) Metadata() Metadata {
	m := Metadata{SchemaVersion: MetadataSchemaVersion, Images: []MetadataImage{}}
	for _, img := range rep.Images {
		digest := img.Digest.String()
		if rep.Where == Pending {
			digest = ""
		}
		mi := MetadataImage{Name: img.Name, Reference: img.Reference, Digest: digest,
			Tags: img.IndexTags, Contract: img.Contract, Platforms: []MetadataPlatform{}}
		for i, p := range img.Platforms {
			mi.Platforms = append(mi.Platforms, MetadataPlatform{Platform: platform.Format(p.Platform), Digest: p.Digest.String(),
				Size: p.Size, CompressedSize: p.CompressedSize, Tags: img.PlatformTags[i], Attestations: attestationMetadata(p.Attestation)})
		}
		mi.Signatures = signatureMetadata(img)
		m.Images = append(m.Images, mi)
	}
	return m
}

// writeMetadata writes the --metadata-file of rep to path, atomically.
func (rep *Report) writeMetadata(path string) error {
	return outfile.WriteJSON(path, rep.Metadata())
}

// GitLab's limits on an artifacts:reports:dotenv file (the defaults of
// GitLab's dotenv_variables and dotenv_size application limits): a file
// beyond them fails the job that uploads it.
const (
	dotenvMaxVariables = 20
	dotenvMaxBytes     = 5 * 1024
)

// dotenvImage is what the dotenv file says about one image: its name,
// whether it has a tag (then it gets a <NAME>_TAG too) and its signer
// (then <NAME>_SIGNATURE and <NAME>_SIGNER, keyless <NAME>_SIGNER_ISSUER).
type dotenvImage struct {
	name   string
	tagged bool
	signer *sign.Who
}

// dotenvKeys are the variable names of images, checked against GitLab's
// rules: a key is [A-Za-z0-9_]+, two images may not give the same key,
// and there are at most dotenvMaxVariables. flag names the file in the
// error.
func dotenvKeys(flag string, images []dotenvImage) ([]string, error) {
	var keys []string
	from := map[string]string{}
	for _, img := range images {
		key := envName(img.name)
		if other, ok := from[key]; ok {
			return nil, inputf("%s: images %s and %s both give %s_IMAGE; rename one, or select one with --image", flag, other, img.name, key)
		}
		from[key] = img.name
		keys = append(keys, key+"_IMAGE")
		if img.tagged {
			keys = append(keys, key+"_TAG")
		}
		keys = append(keys, signatureKeys(key, img.signer)...)
	}
	if len(keys) > dotenvMaxVariables {
		perImage := (len(keys) + len(images) - 1) / len(images)
		return nil, inputf("%s: %d images need %d variables, more than the %d GitLab accepts in one dotenv report; select at most %d images with --image, or write one report per job",
			flag, len(images), len(keys), dotenvMaxVariables, dotenvMaxVariables/perImage)
	}
	return keys, nil
}

// envName is an image name as a variable name: upper case, every other
// character than A-Z, 0-9 and _ replaced by _ (gitlab-runner-helper gives
// GITLAB_RUNNER_HELPER).
func envName(image string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(image) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// checkDotenvPlan fails before anything compiles when the --dotenv file
// of plan ("" is none) could not be written, or would hold more than
// GitLab accepts.
func checkDotenvPlan(path string, plan *recipe.Plan, s *Signer) error {
	var images []dotenvImage
	for _, img := range plan.Images {
		images = append(images, dotenvImage{name: img.Name, tagged: len(img.Tags) > 0, signer: s.who()})
	}
	return checkDotenvFile(path, images)
}

// checkDotenvFile is checkDotenvPlan for a release of images (merge knows
// them from its parts).
func checkDotenvFile(path string, images []dotenvImage) error {
	if path == "" {
		return nil
	}
	if err := checkOutputFile("--dotenv", path); err != nil {
		return err
	}
	_, err := dotenvKeys("--dotenv "+path, images)
	return err
}

// Dotenv is rep as GitLab's artifacts:reports:dotenv reads it, one
// KEY=VALUE line per variable: per image <NAME>_IMAGE, its reference
// pinned by the index digest, and <NAME>_TAG, its Tag as a full
// reference; signed, the index's signature and its signer
// (signatureValues). flag names the file in errors.
func (rep *Report) Dotenv(flag string) ([]byte, error) {
	var images []dotenvImage
	var values []string
	for _, img := range rep.Images {
		di := dotenvImage{name: img.Name, tagged: img.Tag != ""}
		values = append(values, img.Pinned)
		if img.Tag != "" {
			values = append(values, img.Tag)
		}
		if sv := img.signatureValues(); sv != nil {
			di.signer = img.SignedAs
			values = append(values, sv...)
		}
		images = append(images, di)
	}
	keys, err := dotenvKeys(flag, images)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, k := range keys {
		if strings.ContainsAny(values[i], "\n\r\"' #") {
			return nil, fmt.Errorf("%s: the value of %s, %q, is not one a dotenv report can carry", flag, k, values[i])
		}
		fmt.Fprintf(&b, "%s=%s\n", k, values[i])
	}
	if b.Len() > dotenvMaxBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d GitLab accepts in one dotenv report; select fewer images with --image", flag, b.Len(), dotenvMaxBytes)
	}
	return []byte(b.String()), nil
}

// PreferredTag is the tag a later job most likely wants: the first that is
// not latest, else latest; "" when there is none.
func PreferredTag(tags []string) string {
	for _, t := range tags {
		if !strings.HasSuffix(t, ":latest") && t != "latest" {
			return t
		}
	}
	if len(tags) > 0 {
		return tags[0]
	}
	return ""
}

// writeDotenv writes the --dotenv file of rep to path, atomically;
// nothing is written when GitLab would reject it.
func (rep *Report) writeDotenv(path string) error {
	data, err := rep.Dotenv("--dotenv " + path)
	if err != nil {
		return err
	}
	return outfile.WriteBytes(path, data)
}
