package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/release"
)

// printResult writes what a person reads at the end of a build, push or
// merge, on stdout: per image its reference pinned by digest, the tags
// written and a table of its platforms (manifest digest, compressed size,
// platform tags), then what to paste to use it (config.toml lines for a
// helper, Helm values for a runner); a build says where the images are and
// how to publish them.
func printResult(w io.Writer, res *release.Result, d publish.Destination) error {
	for i, img := range res.Images {
		if i > 0 {
			fmt.Fprintln(w)
		}
		pi := img.Publish()
		fmt.Fprintln(w, d.Pinned(pi, img.Digest))
		if tags := d.IndexTags(pi); len(tags) > 0 {
			fmt.Fprintf(w, "  tags: %s\n", strings.Join(tags, " "))
		}
		_, byDigest := d.(*publish.ByDigest)
		if err := platformTable(w, img, byDigest); err != nil {
			return err
		}
		if _, registry := d.(*publish.Registry); registry {
			gitlabLines(w, img, d.Reference(pi), d.IndexTags(pi))
		}
	}
	return publishHint(w, res, d)
}

// platformTable is one row per platform: the manifest's digest, the
// image's compressed size (config and layers, what a pull downloads) and
// its platform tags, or, for a by-digest job (pending), the tags merge
// will write.
func platformTable(w io.Writer, img release.Image, pending bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	tagsHeader := "TAGS"
	if pending {
		tagsHeader = "TAGS (merge writes them)"
	}
	fmt.Fprintln(tw, "  PLATFORM\tMANIFEST\tCOMPRESSED SIZE\t"+tagsHeader)
	for _, p := range img.Platforms {
		tags := "-"
		if len(p.Tags) > 0 {
			tags = strings.Join(p.Tags, ",")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", platform.Format(p.Platform), p.Digest, humanSize(p.CompressedSize), tags)
	}
	return tw.Flush()
}

// humanSize is n bytes in binary units with one decimal: 512 B, 1.5 KiB,
// 23.4 MiB (the progress lines print sizes the same way).
func humanSize(n int64) string { return progress.Size(n) }

// publishHint tells a build where its images are and how to publish
// them; a registry destination needs none.
func publishHint(w io.Writer, res *release.Result, d publish.Destination) error {
	var layout *publish.Layout
	what := "OCI layout"
	switch l := d.(type) {
	case *publish.Layout:
		layout = l
	case *publish.Archive:
		layout, what = &l.Layout, "OCI layout archive"
	default:
		return nil
	}
	manifests := 0
	for _, img := range res.Images {
		manifests += len(img.Platforms)
	}
	fmt.Fprintf(w, "\nWritten to the %s %s: %d %s, %d platform %s.\n", what, layout.Ref.Path,
		len(res.Images), progress.Plural(len(res.Images), "image", "images"), manifests, progress.Plural(manifests, "manifest", "manifests"))
	instead := "--repo REGISTRY/GROUP"
	if layout.Single && len(res.Images) == 1 {
		instead = "--tag REGISTRY/GROUP/" + res.Images[0].Name + ":TAG"
	}
	fmt.Fprintf(w, "To publish: run the same command as push with %s in place of --output\n", instead)
	fmt.Fprintln(w, "(same commit, same digests; the cache spares the compiles), or copy each index as is (per-platform tags stay behind):")
	for _, img := range res.Images {
		pi := img.Publish()
		tags := d.IndexTags(pi)
		if len(tags) == 0 {
			continue
		}
		tag := tags[0][strings.LastIndex(tags[0], ":")+1:]
		fmt.Fprintf(w, "  skopeo copy --all --preserve-digests %s docker://REGISTRY/GROUP/%s:%s\n", tags[0], img.Name, tag)
	}
	return nil
}
