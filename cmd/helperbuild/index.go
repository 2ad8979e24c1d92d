package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/release"
)

func newIndexCmd(env Env) *cobra.Command {
	req := release.IndexRequest{HelperbuildVersion: version}
	platforms, insecure, retry, prog, sf := new(string), new([]string), &retryFlags{}, &progressFlags{}, &signFlags{}
	cmd := &cobra.Command{
		Use:   "index --tag TARGET[:TAG]... SOURCE...",
		Short: "Join images that already exist (per-arch tags, indexes, OCI layouts) into one multi-arch tag, each config checked against its binaries first",
		Example: `  helperbuild index --tag registry.example.com/group/helper:v1.2.3 registry.example.com/group/gitlab-runner-helper:x86_64-v1.2.3 registry.example.com/group/gitlab-runner-helper:arm64-v1.2.3
  helperbuild index --gitlab-helper registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper --version v17.10.0 --dry-run --tag registry.example.com/group/helper:v17.10.0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, all, err := parsePlatforms(cmd, "platforms", *platforms)
			if err != nil {
				return err
			}
			if req.Sign, err = sf.request(env); err != nil {
				return err
			}
			req.Command, req.Sources, req.Platforms, req.AllPlatforms, req.CI, req.Registry = cmd.CommandPath(), args, ps, all, ciOf(env), retry.registry(env, *insecure)
			return runIndex(cmd, env, req, *prog)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&req.Tags, "tag", nil, "where the index goes: REGISTRY/REPOSITORY[:TAG] (default tag latest; repeatable, any repositories)")
	fl.StringVar(platforms, "platforms", "", "the index's platforms, in its order: an index source contributes only these, and each must come from one source (default: every platform of the sources, GitLab's order first)")
	fl.StringVar(&req.GitLabHelper, "gitlab-helper", "", "add GitLab Runner's per-arch helper tags of --version in REPO as sources (REPO:x86_64-V, :arm64-V, :arm-V, :ppc64le-V, :s390x-V; riscv64, loong64 and Windows (:x86_64-V-servercore1809, :x86_64-V-servercore21H2) when --platforms names them)")
	fl.StringVar(&req.GitLabWindowsBase, "gitlab-windows-base", "", "with --gitlab-helper and Windows --platforms (windows/amd64:10.0.17763, :10.0.20348): the variant of GitLab's per-release Windows helper tags, servercore (default, as the runner picks) or nanoserver")
	fl.StringVar(&req.Version, "version", "", "with --gitlab-helper: the runner version its helper tags end in (v17.10.0), or a revision")
	fl.BoolVar(&req.FixPlatform, "fix-platform", false, "publish a source whose config names another platform than its binaries with a config that names theirs (new config and manifest digest), instead of refusing it")
	fl.BoolVar(&req.DryRun, "dry-run", false, "check every source and print the index that would be written, writing nothing")
	fl.IntVar(&req.Jobs, "jobs", 2, "how many source images are checked at once")
	fl.StringVar(&req.Attest, "attest", string(release.AttestIndex), "where each platform image's SLSA provenance (naming its source by digest) goes: index, referrers or none")
	fl.StringVar(&req.Outputs.Metadata, "metadata-file", "", "write the result (digests, tags, platforms) as JSON to this file")
	fl.StringVar(&req.Outputs.Dotenv, "dotenv", "", "write the index's reference pinned by digest and its tag as GitLab's artifacts:reports:dotenv to this file")
	fl.StringArrayVar(insecure, "insecure-registry", nil, "HOST[:PORT] that may be reached over plain HTTP or with an unverified certificate (repeatable)")
	retry.register(fl)
	prog.register(cmd)
	sf.register(fl)
	_ = cmd.RegisterFlagCompletionFunc("platforms", completePlatforms(true))
	_ = cmd.RegisterFlagCompletionFunc("attest", completeAttest)
	return cmd
}

// runIndex runs an index request and prints its report and sources.
func runIndex(cmd *cobra.Command, env Env, req release.IndexRequest, f progressFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	pi, err := release.PrepareIndex(req)
	if err != nil {
		return err
	}
	prog := openProgress(f, cmd.ErrOrStderr(), env)
	rep, err := pi.Execute(cmd.Context(), prog.observer())
	if err == nil && req.DryRun {
		fmt.Fprintln(cmd.OutOrStdout(), "dry run: nothing was written; this is what would be")
	}
	if err := finishRun(cmd, prog, rep, err); err != nil {
		return err
	}
	rep.WriteSources(cmd.OutOrStdout())
	return nil
}
