package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/release"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// Shell completion of flag values (cobra's `completion` command writes the
// scripts; they ask `helperbuild __complete ...`).

// completeValues offers fixed values, each with a description.
func completeValues(pairs ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for i := 0; i+1 < len(pairs); i += 2 {
			switch {
			case !strings.HasPrefix(pairs[i], toComplete):
			case pairs[i+1] == "":
				out = append(out, pairs[i])
			default:
				out = append(out, cobra.CompletionWithDesc(pairs[i], pairs[i+1]))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

var completeContract = completeValues(
	verify.ContractHelper, "the helper image's contract (gitlab-runner-helper)",
	verify.ContractRunner, "the runner image's contract, as the Helm chart runs it",
)

var completeFormat = completeValues(
	"table", "a grid per image and one line per finding",
	"json", "findings as objects, for machines",
)

// completeProgress offers the --progress modes (progress.Modes).
var completeProgress = completeValues(
	"auto", "tty on a terminal, else plain",
	"tty", "a live table redrawn in place",
	"plain", "one line per milestone (collapsible sections in GitLab CI)",
	"json", "one JSON event per line",
	"quiet", "errors and the summary only",
)

// completeLevel offers the gzip levels 1 to 9.
var completeLevel = completeValues("1", "fastest (default)", "2", "", "3", "", "4", "", "5", "", "6", "", "7", "", "8", "", "9", "smallest, several times slower")

// completePlatforms offers the platforms helperbuild can build for the
// last element of a comma-separated list, skipping those already listed;
// withAll also offers "all" as the whole value.
func completePlatforms(withAll bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, partial := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, partial = toComplete[:i+1], toComplete[i+1:]
		}
		listed := map[string]bool{}
		for _, s := range strings.Split(done, ",") {
			listed[strings.TrimSpace(s)] = true
		}
		var out []cobra.Completion
		if withAll && done == "" && strings.HasPrefix("all", partial) {
			out = append(out, cobra.CompletionWithDesc("all", "every platform the base (or the recipe) offers"))
		}
		for _, p := range platform.Known() {
			s := platform.Format(p)
			if !listed[s] && strings.HasPrefix(s, partial) {
				out = append(out, done+s)
			}
		}
		// No space after a platform: another ",os/arch" may follow.
		return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
}

var completeAttest = completeValues(
	string(release.AttestIndex), "in the image index, as docker buildx does",
	string(release.AttestReferrers), "as OCI 1.1 referrers (push)",
	string(release.AttestNone), "no SBOM, no provenance",
)

var completeProvenance = completeValues(
	"min", "nothing run-specific: the index digest stays reproducible",
	"max", "adds the CI job, runner and times",
)

// completeOutput offers the two kinds of --output; after the prefix, files.
func completeOutput(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.Contains(toComplete, ":") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	out, _ := completeValues("oci:", "an OCI layout directory", "oci-archive:", "an OCI layout in a tar file")(c, args, toComplete)
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// completeImages offers the images of the recipe (--config, else
// helperbuild.yaml).
func completeImages(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	config, _ := cmd.Flags().GetString("config")
	names, err := release.ImageNames(config)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
