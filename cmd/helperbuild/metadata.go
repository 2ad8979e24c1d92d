package main

import (
	"encoding/json"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/release"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// metadataSchemaVersion is the version of the --metadata-file format
// (docs/metadata.md). It changes only when a field changes meaning or
// goes; new fields keep it.
const metadataSchemaVersion = 1

// metadata is the --metadata-file format of build, push and merge.
type metadata struct {
	SchemaVersion int             `json:"schemaVersion"`
	Images        []metadataImage `json:"images"`
}

type metadataImage struct {
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
	Platforms []metadataPlatform `json:"platforms"`
}

type metadataPlatform struct {
	Platform string `json:"platform"`
	Digest   string `json:"digest"`
	// Size is the manifest's own size, as its index entry gives it.
	Size int64 `json:"size"`
	// CompressedSize is config plus layers: what a pull downloads.
	CompressedSize int64    `json:"compressedSize"`
	Tags           []string `json:"tags"`
	// Attestations name the platform's SBOM and provenance by digest
	// (absent with --attest none).
	Attestations *metadataAttestation `json:"attestations,omitempty"`
}

// metadataAttestation names a platform's attestations by digest: the
// statements, and the manifests that carry them (the attestation
// manifest in the index, or the referrers).
type metadataAttestation struct {
	SBOM       string   `json:"sbom,omitempty"`
	Provenance string   `json:"provenance,omitempty"`
	Manifest   string   `json:"manifest,omitempty"`
	Referrers  []string `json:"referrers,omitempty"`
}

func attestationMetadata(at *release.Attestation) *metadataAttestation {
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
	m := &metadataAttestation{SBOM: str(d.SBOM), Provenance: str(d.Provenance), Manifest: str(d.Manifest)}
	for _, r := range d.Referrers {
		m.Referrers = append(m.Referrers, r.String())
	}
	return m
}

// metadataOf is res at d as the metadata file describes it.
func metadataOf(res *release.Result, d publish.Destination) metadata {
	m := metadata{SchemaVersion: metadataSchemaVersion, Images: []metadataImage{}}
	for _, img := range res.Images {
		pi := img.Publish()
		digest := img.Digest.String()
		if _, job := d.(*publish.ByDigest); job {
			digest = ""
		}
		mi := metadataImage{Name: img.Name, Reference: d.Reference(pi), Digest: digest,
			Tags: d.IndexTags(pi), Contract: img.Contract, Platforms: []metadataPlatform{}}
		for _, p := range img.Platforms {
			tags := []string{}
			for _, t := range p.Tags {
				tags = append(tags, d.PlatformTag(pi, t))
			}
			mi.Platforms = append(mi.Platforms, metadataPlatform{Platform: platform.Format(p.Platform), Digest: p.Digest.String(),
				Size: p.Size, CompressedSize: p.CompressedSize, Tags: tags, Attestations: attestationMetadata(p.Attestation)})
		}
		m.Images = append(m.Images, mi)
	}
	return m
}

// writeMetadata writes the --metadata-file of res at d to path,
// atomically. Build, push and merge all write it through here.
func writeMetadata(path string, res *release.Result, d publish.Destination) error {
	return writeJSONFile(path, metadataOf(res, d))
}

// verifyMetadata is verify's --metadata-file: the report of each image
// checked, in the style of the build's file.
type verifyMetadata struct {
	SchemaVersion int                   `json:"schemaVersion"`
	Images        []verifyMetadataImage `json:"images"`
}

type verifyMetadataImage struct {
	// Reference is the image as verify was given it.
	Reference string `json:"reference"`
	verify.JSONReport
}

// writeVerifyMetadata writes verify's report of ref to path, atomically.
func writeVerifyMetadata(path, ref string, rep *verify.Report) error {
	return writeJSONFile(path, verifyMetadata{SchemaVersion: metadataSchemaVersion,
		Images: []verifyMetadataImage{{Reference: ref, JSONReport: verify.JSON(rep)}}})
}

// writeJSONFile writes v as indented JSON to path, atomically.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteBytes(path, append(data, '\n'))
}
