package main

import (
	"cmp"
	"errors"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/release"
)

// buildRun is a build or push with every input gathered and checked by
// release.Prepare, and how to show its progress.
type buildRun struct {
	*release.Prepared
	progress progressFlags
	env      Env
}

// buildExec runs a prepared build or push; tests swap it to look at what
// the flags turned into.
type buildExec func(r *buildRun, cmd *cobra.Command) error

// prepareBuild checks the flags and turns flags and environment into a
// prepared release request.
func prepareBuild(cmd *cobra.Command, env Env, f *buildFlags, pkg string, push bool) (*buildRun, error) {
	if f.jobs <= 0 {
		return nil, usagef("--jobs must be at least 1, got %d", f.jobs)
	}
	if f.level < 1 || f.level > 9 {
		return nil, usagef("--compression-level %d: want 1 (fastest) to 9 (smallest)", f.level)
	}
	if err := f.progress.validate(); err != nil {
		return nil, err
	}
	req, err := buildRequest(cmd, env, f, pkg, push)
	if err != nil {
		return nil, err
	}
	p, err := release.Prepare(cmd.Context(), req)
	if err != nil {
		return nil, err
	}
	return &buildRun{Prepared: p, progress: f.progress, env: env}, nil
}

// buildRequest is the release request of build or push: flags first,
// then GitLab CI's variables.
func buildRequest(cmd *cobra.Command, env Env, f *buildFlags, pkg string, push bool) (release.Request, error) {
	platforms, all, err := parsePlatforms(cmd, "platforms", f.platforms)
	if err != nil {
		return release.Request{}, err
	}
	rel, err := parseReleasePlatforms(cmd, f)
	if err != nil {
		return release.Request{}, err
	}
	if err := checkModeFlags(cmd, pkg); err != nil {
		return release.Request{}, err
	}
	req := release.Request{
		Command: cmd.CommandPath(), Push: push, ByDigest: f.byDigest,
		Package: release.Package{Main: pkg, Base: f.base, BinaryName: f.binaryName, Ldflags: f.ldflags},
		Config:  f.config, Images: f.images, Platforms: platforms, AllPlatforms: all, ReleasePlatforms: rel,
		Tags: f.tags, Output: f.output, Repo: f.repo, RepoFromEnv: env.Get("CI_REGISTRY_IMAGE"), PartFile: f.partFile,
		Given: release.Given{
			Version:  cmp.Or(f.version, env.Get("CI_COMMIT_TAG")),
			Revision: cmp.Or(f.revision, env.Get("CI_COMMIT_SHA")),
			Branch:   cmp.Or(f.branch, env.Get("CI_COMMIT_REF_NAME")),
			Source:   cmp.Or(f.source, env.Get("CI_PROJECT_URL")),
		},
		CI:       ciOf(env),
		Env:      env,
		Registry: f.retry.registry(env, f.insecure),
		Jobs:     f.jobs, CompressionLevel: f.level,
		Attest:             release.AttestRequest{Mode: f.attest.mode, Provenance: f.attest.provenance, Dir: f.attest.dir},
		Run:                f.run,
		Outputs:            release.Outputs{Metadata: f.metadataFile, Dotenv: f.dotenv, AttestDir: f.attest.dir},
		HelperbuildVersion: version,
	}
	for _, key := range []string{"SOURCE_DATE_EPOCH", "CI_COMMIT_TIMESTAMP"} {
		if v := env.Get(key); v != "" {
			req.Given.Epoch, req.Given.EpochFrom = v, key
			break
		}
	}
	req.CacheDir, req.CacheDirFrom = cacheDir(env, f)
	if req.Sign, err = f.sign.request(env); err != nil {
		return release.Request{}, err
	}
	return req, nil
}

// ciOf is what GitLab CI's predefined variables say about the job.
func ciOf(env Env) release.CI {
	return release.CI{
		JobID: env.Get("CI_JOB_ID"), JobName: env.Get("CI_JOB_NAME"), JobURL: env.Get("CI_JOB_URL"),
		ServerURL: env.Get("CI_SERVER_URL"), ProjectPath: env.Get("CI_PROJECT_PATH"),
		RunnerID: env.Get("CI_RUNNER_ID"), RunnerVersion: env.Get("CI_RUNNER_VERSION"),
		CommitTag: env.Get("CI_COMMIT_TAG"), CommitBranch: env.Get("CI_COMMIT_BRANCH"),
		ProjectDir: env.Get("CI_PROJECT_DIR"),
	}
}

// execute runs the prepared build or push and prints its report.
func (r *buildRun) execute(cmd *cobra.Command) error {
	prog := openProgress(r.progress, cmd.ErrOrStderr(), r.env)
	rep, err := r.Execute(cmd.Context(), prog.observer())
	return finishRun(cmd, prog, rep, err)
}

// finishRun closes the progress with the run's outcome, prints the report
// (also when only an output file failed) and returns the error: build,
// push and merge end alike.
func finishRun(cmd *cobra.Command, prog *runProgress, rep *release.Report, err error) error {
	outputOnly := release.IsOutputError(err)
	if outputOnly {
		prog.close(nil) // everything was published
	} else {
		prog.close(err) // the final state, before anything else is printed
	}
	if werr := release.WriteCheckFailures(cmd.ErrOrStderr(), err); werr != nil {
		return werr
	}
	if rep != nil {
		if perr := rep.WriteSummary(cmd.OutOrStdout()); perr != nil {
			return perr
		}
	}
	var input *release.InputError
	if err != nil && !outputOnly && !release.Tagged(err) && !errors.As(err, &input) {
		err = nothingTagged{err} // tags come last: none was written
	}
	return err
}
