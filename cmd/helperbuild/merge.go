package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/release"
)

type mergeFlags struct {
	noLatest     bool
	platforms    string
	config       string
	repo         string
	metadataFile string
	dotenv       string
	insecure     []string
	retry        retryFlags
	progress     progressFlags
	sign         signFlags
}

func newMergeCmd(env Env) *cobra.Command {
	f := &mergeFlags{}
	cmd := &cobra.Command{
		Use:   "merge PART...",
		Short: "Publish the indexes of a release whose platforms were pushed by separate jobs (push --by-digest)",
		Long: `Join the part files that push --by-digest wrote, one per CI job, into one OCI
image index per image, the same bytes a single push of every platform writes, and
publish it as push does: every manifest checked in the registry first (configs
read, never layers), then the index tags, the platform tags, "latest" last.

PART is a part file, a glob (quote it: "parts/*.json") or a directory, whose
*.json files are read (a directory of GitLab artifacts). Merge refuses, before
writing anything, parts from different revisions, versions, epochs or recipes,
a platform missing or given twice, and a manifest the registry does not have.`,
		Example: `  helperbuild merge "parts/*.json"
  helperbuild merge --platforms linux/amd64,linux/arm64 --metadata-file out/release.json parts/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("merge needs the part files: helperbuild merge parts/*.json (or the directory of them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd, env, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.platforms, "platforms", "", "the release's platforms, in index order (default: the list the parts record; when they all record one, it must be that list)")
	fl.StringVar(&f.config, "config", "", "check that every part was built from this recipe (helperbuild.yaml)")
	fl.BoolVar(&f.noLatest, "no-latest", false, "write every tag the parts name except latest (the CI template's release from a branch)")
	fl.StringVar(&f.repo, "repo", "", "publish every image under PREFIX/<image name> instead of where the parts were pushed (blobs are mounted from there)")
	fl.StringVar(&f.metadataFile, "metadata-file", "", "write the result (digests, tags, platforms) as JSON to this file")
	fl.StringVar(&f.dotenv, "dotenv", "", "write each image's reference pinned by digest and its tag as GitLab's artifacts:reports:dotenv to this file")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, "HOST[:PORT] that may be reached over plain HTTP or with an unverified certificate (repeatable)")
	f.retry.register(fl)
	f.progress.register(cmd)
	f.sign.register(fl)
	_ = cmd.RegisterFlagCompletionFunc("platforms", completePlatforms(true))
	return cmd
}

// runMerge reads the parts, checks them against each other, then in the
// registry, and publishes the indexes with push's registry destination.
func runMerge(cmd *cobra.Command, env Env, f *mergeFlags, args []string) error {
	if err := f.progress.validate(); err != nil {
		return err
	}
	ps, all, err := parsePlatforms(cmd, "platforms", f.platforms)
	if err != nil {
		return err
	}
	paths, err := release.PartPaths(args)
	if err != nil {
		return err
	}
	signReq, err := f.sign.request(env)
	if err != nil {
		return err
	}
	pm, err := release.PrepareMerge(release.MergeRequest{
		Command: cmd.CommandPath(), Parts: paths, Platforms: ps, AllPlatforms: all, Config: f.config, Repo: f.repo, NoLatest: f.noLatest,
		Registry: f.retry.registry(env, f.insecure), Outputs: release.Outputs{Metadata: f.metadataFile, Dotenv: f.dotenv}, Sign: signReq,
	})
	if err != nil {
		var input *release.InputError
		if !errors.As(err, &input) {
			err = nothingTagged{err}
		}
		return err
	}
	prog := openProgress(f.progress, cmd.ErrOrStderr(), env)
	rep, err := pm.Execute(cmd.Context(), prog.observer())
	return finishRun(cmd, prog, rep, err)
}
