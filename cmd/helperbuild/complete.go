package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// Shell completion of flag values (cobra's `completion` command writes the
// scripts; they ask `helperbuild __complete ...`).

// completeValues offers fixed values, each with a description.
func completeValues(pairs ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for i := 0; i+1 < len(pairs); i += 2 {
			if strings.HasPrefix(pairs[i], toComplete) {
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

// completeProgress offers the --progress modes (progressModes).
var completeProgress = completeValues(
	"auto", "tty on a terminal, else plain",
	"tty", "a live table redrawn in place",
	"plain", "one line per milestone (collapsible sections in GitLab CI)",
	"json", "one JSON event per line",
	"quiet", "errors and the summary only",
)

// completeLevel offers the gzip levels 1 to 9.
func completeLevel(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for l := 1; l <= 9; l++ {
		s := strconv.Itoa(l)
		desc := ""
		switch l {
		case 1:
			desc = "fastest (default)"
		case 9:
			desc = "smallest, several times slower"
		}
		switch {
		case !strings.HasPrefix(s, toComplete):
		case desc == "":
			out = append(out, s)
		default:
			out = append(out, cobra.CompletionWithDesc(s, desc))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

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
