package main

import (
	"github.com/spf13/cobra"
)

// build and push have two modes: config-free (a PACKAGE argument) and
// recipe (helperbuild.yaml). No flag is ignored in either: a flag that
// means nothing in the mode at hand is a usage error that says why and
// what to use instead. What each flag does in each mode:
//
//	--base, --binary-name, --ldflags   config-free only
//	--config, --image                  recipe only
//	--tag     config-free: the references (push) or entry names (build);
//	          recipe: a tag added to every selected image
//	--repo    push only: recipe images go to REPO/<name>; config-free,
//	          a --tag without a registry goes to REPO/<binary name>
//	--cache-dir with --no-cache        contradictory
//
// Every other flag means the same in both modes. TestEveryFlagInBothModes
// holds each flag of build and push to this.
func checkModeFlags(cmd *cobra.Command, pkg string) error {
	given := cmd.Flags().Changed
	value := func(name string) string { return cmd.Flags().Lookup(name).Value.String() }
	name := cmd.Name()
	if pkg != "" {
		switch {
		case given("config"):
			return usagef("--config is for recipe mode, but %s was given a package (%s); drop one: with a package the image is --base plus the binary", name, pkg)
		case given("image"):
			return usagef("--image selects images of helperbuild.yaml, but %s was given a package (%s); drop --image, or the package to build the recipe", name, pkg)
		}
	} else {
		switch {
		case given("base"):
			return usagef("--base is for config-free mode: give the Go main package too (helperbuild %s --base %s ./cmd/app); in helperbuild.yaml the base is the Dockerfile's FROM: args: {BASE_IMAGE: %s}, or per platform base: {linux/arm64: REF}", name, value("base"), value("base"))
		case given("binary-name"):
			return usagef("--binary-name is for config-free mode: give the Go main package too; in helperbuild.yaml a binary is named by its binaries[].output")
		case given("ldflags"):
			return usagef("--ldflags is for config-free mode: give the Go main package too; in helperbuild.yaml set build.ldflags (values from CI through {{.Env.NAME}})")
		}
	}
	if given("repo") && name == "build" {
		return usagef("--repo names where push publishes; build writes to --output (oci:DIR or oci-archive:FILE.tar): drop --repo, or run push")
	}
	if given("cache-dir") && given("no-cache") {
		return usagef("--cache-dir %s and --no-cache contradict each other; give one", value("cache-dir"))
	}
	return nil
}
