package manifest

import (
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
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
	a := map[string]string{specsv1.AnnotationCreated: m.Created.UTC().Format(time.RFC3339)}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set(specsv1.AnnotationSource, m.Source)
	set(specsv1.AnnotationRevision, m.Revision)
	set(specsv1.AnnotationVersion, m.Version)
	set(specsv1.AnnotationBaseImageName, baseName)
	if baseDigest != (v1.Hash{}) {
		a[specsv1.AnnotationBaseImageDigest] = baseDigest.String()
	}
	return a
}
