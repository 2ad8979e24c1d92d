package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/release"
)

// printResult writes each image's index digest and a table of its platforms.
func printResult(w io.Writer, res *release.Result, d publish.Destination) error {
	for i, img := range res.Images {
		if i > 0 {
			fmt.Fprintln(w)
		}
		pi := publishImage(img)
		fmt.Fprintln(w, d.Pinned(pi, img.Digest))
		if tags := d.IndexTags(pi); len(tags) > 0 {
			fmt.Fprintf(w, "tags: %s\n", strings.Join(tags, " "))
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PLATFORM\tMANIFEST\tSIZE\tTAGS")
		for _, p := range img.Platforms {
			tags := "-"
			if len(p.Tags) > 0 {
				tags = fmt.Sprint(p.Tags)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", platform.Format(p.Platform), p.Digest, p.Size, tags)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// metadata is the --metadata-file format.
type metadata struct {
	Images []metadataImage `json:"images"`
}

type metadataImage struct {
	Name      string             `json:"name"`
	Reference string             `json:"reference"`
	Digest    string             `json:"digest"`
	Tags      []string           `json:"tags"`
	Platforms []metadataPlatform `json:"platforms"`
}

type metadataPlatform struct {
	Platform string   `json:"platform"`
	Digest   string   `json:"digest"`
	Size     int64    `json:"size"`
	Tags     []string `json:"tags"`
}

func writeMetadata(path string, res *release.Result, d publish.Destination) error {
	var m metadata
	for _, img := range res.Images {
		pi := publishImage(img)
		mi := metadataImage{Name: img.Name, Reference: d.Reference(pi), Digest: img.Digest.String(), Tags: d.IndexTags(pi)}
		for _, p := range img.Platforms {
			tags := []string{}
			for _, t := range p.Tags {
				tags = append(tags, d.PlatformTag(pi, t))
			}
			mi.Platforms = append(mi.Platforms, metadataPlatform{Platform: platform.Format(p.Platform), Digest: p.Digest.String(), Size: p.Size, Tags: tags})
		}
		m.Images = append(m.Images, mi)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}
