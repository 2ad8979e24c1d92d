package publish

import (
	"github.com/google/go-containerregistry/pkg/name"
)

// Placed is the naming of a release whose images already know their
// repositories and the tags each gets there (merge reads them from part
// files): image name -> placements, in order.
type Placed map[string][]Placement

// Placement is one repository of an image and the index tags it gets there.
type Placement struct {
	Repository name.Repository
	Tags       []string
}

func (p Placed) repositories(image string) []name.Repository {
	var out []name.Repository
	for _, pl := range p[image] {
		out = append(out, pl.Repository)
	}
	return out
}

// split gives one Image per placement, with the tags it has there.
func (p Placed) split(img Image) []Image {
	var out []Image
	for _, pl := range p[img.Name] {
		q := img
		q.Repository, q.Tags = pl.Repository, pl.Tags
		out = append(out, q)
	}
	return out
}

func (p Placed) reference(image string) string {
	if pls := p[image]; len(pls) > 0 {
		return pls[0].Repository.String()
	}
	return image
}

func (p Placed) indexTags(img Image) []string {
	out := []string{}
	for _, pl := range p[img.Name] {
		for _, t := range pl.Tags {
			out = append(out, pl.Repository.Tag(t).String())
		}
	}
	return out
}
