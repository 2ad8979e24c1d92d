package part

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// MediaType names the part file format; SchemaVersion is its version.
const (
	MediaType     = "application/vnd.helperbuild.part.v1+json"
	SchemaVersion = 1
)

// File is one part file.
type File struct {
	SchemaVersion int    `json:"schemaVersion"`
	MediaType     string `json:"mediaType"`
	// Job is the CI job that wrote the part, when it ran in one.
	Job *Job `json:"job,omitempty"`
	// Helperbuild is the version of helperbuild that wrote the part: the
	// provenance names it, so jobs of other versions make another index.
	Helperbuild string `json:"helperbuild,omitempty"`
	// Version, Revision and Created (the epoch) are the release's.
	Version  string    `json:"version"`
	Revision string    `json:"revision"`
	Created  time.Time `json:"created"`
	// Recipe is the recipe the job built from; nil in config-free mode.
	Recipe *Recipe `json:"recipe,omitempty"`
	// Platforms is the release's platform list, in the order of the index:
	// the recipe's, or config-free, the push's.
	Platforms []string `json:"platforms"`
	Images    []Image  `json:"images"`

	// Path is where the part was read from; not written.
	Path string `json:"-"`
}

// Job is a CI job, from GitLab's CI_JOB_ID, CI_JOB_NAME and CI_JOB_URL.
type Job struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Recipe names a recipe by its path (as given) and the digest of its bytes.
type Recipe struct {
	Path   string  `json:"path"`
	Digest v1.Hash `json:"digest"`
}

// Image is one image of the release, in one repository.
type Image struct {
	Name       string `json:"name"`
	Repository string `json:"repository"`
	// Platforms, when set, are the only release platforms this image is
	// built for (the recipe's images[].platforms).
	Platforms []string `json:"platforms,omitempty"`
	// Contract is the GitLab image contract the recipe names for the
	// image (helper, runner), if any.
	Contract string `json:"contract,omitempty"`
	// Annotations are the annotations of the index.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Tags point at the index.
	Tags []string `json:"tags"`
	// PlatformTags point at one platform's manifest; only this job's.
	PlatformTags []PlatformTag `json:"platformTags"`
	// Manifests are the index entries this job contributes, in the order of
	// its own index: its platforms' images, then any other entries.
	Manifests []v1.Descriptor `json:"manifests"`
}

// PlatformTag is a tag for the manifest with Digest, built for Platform.
type PlatformTag struct {
	Platform string  `json:"platform"`
	Digest   v1.Hash `json:"digest"`
	Tag      string  `json:"tag"`
}

// Name is how messages name the part: its file, and its job when known.
func (f *File) Name() string {
	if f.Job == nil || f.Job.ID == "" && f.Job.Name == "" {
		return f.Path
	}
	job := strings.TrimSpace("job " + f.Job.ID + " " + quoteName(f.Job.Name))
	return f.Path + " (" + job + ")"
}

func quoteName(n string) string {
	if n == "" {
		return ""
	}
	return fmt.Sprintf("%q", n)
}

// Read reads the part file at path.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("part file %s: not JSON: %w", path, err)
	}
	if head.MediaType != MediaType {
		return nil, fmt.Errorf("part file %s: mediaType %q, want %s (a file written by helperbuild push --by-digest --part-file)", path, head.MediaType, MediaType)
	}
	if head.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("part file %s: schemaVersion %d, this helperbuild reads %d: merge with the helperbuild version that wrote it", path, head.SchemaVersion, SchemaVersion)
	}
	f := &File{}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("part file %s: %w", path, err)
	}
	f.Path = path
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("part file %s: %w", path, err)
	}
	return f, nil
}

// check refuses a part missing what merge needs.
func (f *File) check() error {
	if len(f.Images) == 0 {
		return errors.New("no images")
	}
	for _, img := range f.Images {
		if img.Name == "" || img.Repository == "" {
			return errors.New("an image without name or repository")
		}
		if len(f.Platforms) == 0 && len(img.Platforms) == 0 {
			return fmt.Errorf("image %s: no platforms, neither the release's nor its own", img.Name)
		}
		if len(img.Manifests) == 0 {
			return fmt.Errorf("image %s: no manifests", img.Name)
		}
		for _, d := range img.Manifests {
			if d.Digest == (v1.Hash{}) || d.Size <= 0 || d.MediaType == "" {
				return fmt.Errorf("image %s: a manifest without digest, size or mediaType", img.Name)
			}
		}
	}
	return nil
}

// Marshal is f as a part file holds it, with this schema's version and
// media type.
func Marshal(f *File) ([]byte, error) {
	f.SchemaVersion, f.MediaType = SchemaVersion, MediaType
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// RecipeAt names the recipe file at path by its path and the digest of its
// bytes.
func RecipeAt(path string) (*Recipe, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, _, err := v1.SHA256(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return &Recipe{Path: path, Digest: d}, nil
}
