package release

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
)

// WriteSummary writes what a person reads at the end of a build, push,
// merge or index (the command puts it on stdout): per image its reference pinned by digest, the tags
// written and a table of its platforms (manifest digest, compressed size,
// platform tags), then what to paste to use it (config.toml lines for a
// helper, Helm values for a runner); a build says where the images are and
// how to publish them.
func (rep *Report) WriteSummary(w io.Writer) error {
	for i, img := range rep.Images {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, img.Pinned)
		if len(img.IndexTags) > 0 {
			fmt.Fprintf(w, "  tags: %s\n", strings.Join(img.IndexTags, " "))
		}
		if rep.DefaultBase {
			fmt.Fprintln(w, "  "+baseLine())
		}
		if l := img.SignatureLine(); l != "" {
			fmt.Fprintln(w, "  "+l)
			for _, d := range img.SignatureDigests() {
				fmt.Fprintln(w, "    "+d)
			}
		}
		if err := platformTable(w, img.Image, rep.Where == Pending); err != nil {
			return err
		}
		if rep.Where == InRegistry {
			gitlabLines(w, img.Image, img.Reference, img.IndexTags)
		}
	}
	return rep.publishHint(w)
}

// platformTable is one row per platform: the manifest's digest, the
// image's compressed size (config and layers, what a pull downloads) and
// its platform tags, or, for a by-digest job (pending), the tags merge
// will write.
func platformTable(w io.Writer, img product.Image, pending bool) error {
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
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", platform.Format(p.Platform), p.Digest, progress.Size(p.CompressedSize), tags)
	}
	return tw.Flush()
}

// publishHint tells a build where its images are and how to publish
// them; a registry destination needs none.
func (rep *Report) publishHint(w io.Writer) error {
	what := "OCI layout"
	switch rep.Where {
	case InLayout:
	case InArchive:
		what = "OCI layout archive"
	default:
		return nil
	}
	manifests := 0
	for _, img := range rep.Images {
		manifests += len(img.Platforms)
	}
	fmt.Fprintf(w, "\nWritten to the %s %s: %d %s, %d platform %s.\n", what, rep.Path,
		len(rep.Images), progress.Plural(len(rep.Images), "image", "images"), manifests, progress.Plural(manifests, "manifest", "manifests"))
	instead := "--repo REGISTRY/GROUP"
	if rep.Single && len(rep.Images) == 1 {
		instead = "--tag REGISTRY/GROUP/" + rep.Images[0].Name + ":TAG"
	}
	fmt.Fprintf(w, "To publish: run the same command as push with %s in place of --output\n", instead)
	fmt.Fprintln(w, "(same commit, same digests; the cache spares the compiles), or copy each index as is (per-platform tags stay behind):")
	for _, img := range rep.Images {
		tags := img.IndexTags
		if len(tags) == 0 {
			continue
		}
		tag := tags[0][strings.LastIndex(tags[0], ":")+1:]
		fmt.Fprintf(w, "  skopeo copy --all --preserve-digests %s docker://REGISTRY/GROUP/%s:%s\n", tags[0], img.Name, tag)
	}
	return nil
}

// WriteSources writes, after an index run's summary, where each platform
// came from and what its binaries showed (and --dry-run's index).
func (rep *Report) WriteSources(w io.Writer) {
	fmt.Fprintln(w, "  sources, each config checked against its binaries:")
	width := 0
	for _, s := range rep.Sources {
		width = max(width, len(platform.Format(s.Platform)))
	}
	for _, s := range rep.Sources {
		var carried string
		if s.Attestations > 0 || s.Referrers > 0 || s.CosignTags > 0 {
			carried = fmt.Sprintf("; carried: %d %s, %d %s", s.Attestations, progress.Plural(s.Attestations, "attestation manifest", "attestation manifests"),
				s.Referrers, progress.Plural(s.Referrers, "referrer", "referrers"))
		}
		if s.CosignTags > 0 {
			carried += fmt.Sprintf(", %d cosign %s", s.CosignTags, progress.Plural(s.CosignTags, "tag", "tags"))
		}
		fmt.Fprintf(w, "    %-*s  %s (%s)%s\n", width, platform.Format(s.Platform), s.Source, s.SourceManifest, carried)
		switch {
		case platform.IsWindows(s.Platform) && s.Base != "":
			fmt.Fprintf(w, "      os.version: its base %s says %s (read from the base's config; its foreign layers were not read)\n", s.Base, s.BaseOSVersion)
		case platform.IsWindows(s.Platform):
			fmt.Fprintf(w, "      os.version: taken from its config, not checked against a base: %s\n", s.BaseUnseen)
		}
		if s.Fixed {
			kind := "ELF executables"
			if platform.IsWindows(s.Platform) {
				kind = ".exe files and base"
			}
			fmt.Fprintf(w, "      FIXED: its config said %s, its %s (%d) are %s; published with a corrected config as %s (layers unchanged; the source's attestations and referrers about it left out: %d)\n",
				platform.Format(s.ConfigSaid), kind, s.Binaries, platform.Format(s.Platform), s.Manifest, s.Dropped)
		}
	}
	if rep.DryRunIndex != nil {
		fmt.Fprintf(w, "the index it would write:\n%s\n", rep.DryRunIndex)
	}
}
