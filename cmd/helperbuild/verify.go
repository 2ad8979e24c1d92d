package main

import (
	"fmt"
	"log/slog"
	"os"
	"path"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/release"
	"github.com/helperbuild/helperbuild/internal/verify"
)

type verifyFlags struct {
	platforms string
	contract  string
	allFiles  bool
	run       bool
	versions  []string
	runLimits runLimitFlags
	nodes     string
	format    string
	insecure  []string
	retry     retryFlags
	jobs      int
	metadata  string
	attest    bool
	sig       verifySignFlags
}

func newVerifyCmd(env Env) *cobra.Command {
	f := &verifyFlags{}
	cmd := &cobra.Command{
		Use:   "verify REF",
		Short: "Check an image: platforms, each binary's architecture, the GitLab image contract",
		Long: `Check a published image (registry reference, oci:DIR[:TAG] or oci-archive:FILE[:TAG]):
every expected platform is in the index, every ELF executable the image added matches
its platform, the config agrees with the index, and optionally the GitLab Runner image
contract (--contract helper|runner), a sandboxed run (--run) and a cluster's nodes (--nodes).
Exit 0 when every check passed, 1 when one failed, 2 for usage errors, 3 when REF is not found.`,
		Example: `  helperbuild verify --platforms linux/amd64,linux/arm64 registry.example.com/group/gitlab-runner-helper:v1.2.3
  helperbuild verify --run oci:out/oci:gitlab-runner-helper:v1.2.3
  helperbuild verify --contract helper --run registry.example.com/group/gitlab-runner-helper:v1.2.3
  helperbuild verify --nodes nodes.json --format json registry.example.com/group/gitlab-runner-helper:v1.2.3`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("verify takes one image reference, got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd, env, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.platforms, "platforms", "", "platforms the index must hold exactly, e.g. linux/amd64,linux/arm64,linux/arm/v7")
	fl.StringVar(&f.contract, "contract", "", "check the GitLab Runner image contract: helper or runner")
	fl.BoolVar(&f.allFiles, "all-files", false, "check every ELF executable of the image, not only those its own layers added")
	fl.BoolVar(&f.run, "run", false, "run gitlab-runner and gitlab-runner-helper (when the image's own layers hold them) with --version and sh -c true in a sandbox (Linux namespaces; qemu-user inside for foreign platforms); with --contract, also start the image as GitLab's Helm chart (runner) or executors (helper) start it (docs/startup-run.md)")
	fl.StringArrayVar(&f.versions, "run-version", nil, "`PATH` of another Go program of the image's own layers that --run asks --version, such as a binary you built (repeatable)")
	f.runLimits.register(fl)
	fl.StringVar(&f.nodes, "nodes", "", "`FILE` holding the output of kubectl get nodes -o json: report nodes with no image in the index")
	fl.BoolVar(&f.attest, "attestations", false, "every platform image has an SBOM and provenance (in the index, or as referrers on a registry) about it, whose Go modules and base digests agree with the image")
	fl.StringVar(&f.format, "format", "table", "output format: table or json")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, "HOST[:PORT] that may be reached over plain HTTP or with an unverified certificate (repeatable)")
	fl.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "platforms checked at once")
	fl.StringVar(&f.metadata, "metadata-file", "", "also write the report as JSON to this file (docs/metadata.md), whether the checks pass or not")
	f.retry.register(fl)
	f.sig.register(fl)
	_ = cmd.RegisterFlagCompletionFunc("platforms", completePlatforms(false))
	_ = cmd.RegisterFlagCompletionFunc("contract", completeContract)
	_ = cmd.RegisterFlagCompletionFunc("format", completeFormat)
	return cmd
}

func runVerify(cmd *cobra.Command, env Env, f *verifyFlags, arg string) error {
	target, opts, err := verifyInputs(cmd, f, arg)
	if err != nil {
		return err
	}
	rep, err := target.Verify(cmd.Context(), opts, f.retry.registry(env, f.insecure), f.metadata, release.Observer{Logger: progress.NewLogger(cmd.ErrOrStderr()),
		RetryLogger: slog.New(slog.DiscardHandler)}) // verify has no -v: the summary per host only
	if err != nil {
		return err
	}
	return verify.Write(cmd.OutOrStdout(), f.format, arg, rep)
}

// verifyInputs checks verify's flags and argument and turns them into the
// image to read and the checks' options (TempDir left to the caller).
func verifyInputs(cmd *cobra.Command, f *verifyFlags, arg string) (target *release.VerifyTarget, opts verify.Options, err error) {
	if f.format != "table" && f.format != "json" {
		return nil, opts, usagef("--format %q: want table or json", f.format)
	}
	if f.contract != "" && f.contract != verify.ContractHelper && f.contract != verify.ContractRunner {
		return nil, opts, usagef("--contract %q: want helper or runner", f.contract)
	}
	if f.jobs <= 0 {
		return nil, opts, usagef("--jobs must be at least 1, got %d", f.jobs)
	}
	if err = f.retry.registry(nil, nil).Check(); err != nil {
		return nil, opts, err
	}
	platforms, all, err := parsePlatforms(cmd, "platforms", f.platforms)
	if err != nil {
		return nil, opts, err
	}
	if all {
		return nil, opts, usagef(`--platforms all means nothing to verify; list the platforms the index must hold`)
	}
	if target, err = release.ParseVerifyTarget(arg, f.insecure); err != nil {
		return nil, opts, err
	}
	if err = f.sig.apply(target); err != nil {
		return nil, opts, err
	}
	if err = f.runLimits.validate(); err != nil {
		return nil, opts, err
	}
	for _, v := range f.versions {
		if !f.run {
			return nil, opts, usagef("--run-version %s asks --version in --run; add --run", v)
		}
		if !path.IsAbs(v) {
			return nil, opts, usagef("--run-version %q: want the program's absolute path in the image, e.g. /usr/bin/%s", v, v)
		}
	}
	opts = verify.Options{Platforms: platforms, Contract: f.contract, AllFiles: f.allFiles, Run: f.run, Versions: f.versions, Jobs: f.jobs, Attestations: f.attest,
		RunTimeout: f.runLimits.timeout, UnpackMaxBytes: int64(f.runLimits.maxSize), LayersMaxBytes: int64(f.runLimits.layersMaxSize)}
	if f.nodes != "" {
		file, err := os.Open(f.nodes)
		if err != nil {
			return nil, opts, usageError{fmt.Errorf("--nodes: %w", err)}
		}
		opts.Nodes, err = verify.ParseNodes(file)
		file.Close()
		if err != nil {
			return nil, opts, usageError{fmt.Errorf("--nodes %s: %w", f.nodes, err)}
		}
	}
	return target, opts, nil
}
