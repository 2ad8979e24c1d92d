package manifest

import (
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// OCI annotation keys written on every manifest and index.
const (
	AnnotationCreated    = "org.opencontainers.image.created"
	AnnotationSource     = "org.opencontainers.image.source"
	AnnotationRevision   = "org.opencontainers.image.revision"
	AnnotationVersion    = "org.opencontainers.image.version"
	AnnotationBaseName   = "org.opencontainers.image.base.name"
	AnnotationBaseDigest = "org.opencontainers.image.base.digest"
)

// Meta describes the release an image belongs to.
type Meta struct {
	Created  time.Time // the epoch: SOURCE_DATE_EPOCH, commit time, ...
	Source   string    // repository URL; omitted when empty
	Revision string
	Version  string
}

// Annotations returns the annotations for an artifact built on baseName
// pinned at baseDigest (both empty for scratch).
func (m Meta) Annotations(baseName string, baseDigest v1.Hash) map[string]string {
	a := map[string]string{AnnotationCreated: m.Created.UTC().Format(time.RFC3339)}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set(AnnotationSource, m.Source)
	set(AnnotationRevision, m.Revision)
	set(AnnotationVersion, m.Version)
	set(AnnotationBaseName, baseName)
	if baseDigest != (v1.Hash{}) {
		a[AnnotationBaseDigest] = baseDigest.String()
	}
	return a
}
