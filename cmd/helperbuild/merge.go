package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/release"
)

type mergeFlags struct {
	platforms    string
	config       string
	repo         string
	metadataFile string
	dotenv       string
	insecure     []string
	retry        retryFlags
	progress     progressFlags
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
	fl.StringVar(&f.repo, "repo", "", "publish every image under PREFIX/<image name> instead of where the parts were pushed (blobs are mounted from there)")
	fl.StringVar(&f.metadataFile, "metadata-file", "", "write the result (digests, tags, platforms) as JSON to this file")
	fl.StringVar(&f.dotenv, "dotenv", "", "write each image's reference pinned by digest and its tag as GitLab's artifacts:reports:dotenv to this file")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, "HOST[:PORT] that may be reached over plain HTTP or with an unverified certificate (repeatable)")
	f.retry.register(fl)
	f.progress.register(cmd)
	_ = cmd.RegisterFlagCompletionFunc("platforms", completePlatforms(true))
	return cmd
}

// runMerge reads the parts, checks them against each other, then in the
// registry, and publishes the indexes with push's registry destination.
func runMerge(cmd *cobra.Command, env Env, f *mergeFlags, args []string) error {
	opts, err := mergeInputs(f, env)
	if err != nil {
		return err
	}
	paths, err := partPaths(args)
	if err != nil {
		return err
	}
	parts := make([]*part.File, len(paths))
	for i, p := range paths {
		if parts[i], err = part.Read(p); err != nil {
			return nothingTagged{err}
		}
	}
	prog := openProgress(f.progress, cmd.ErrOrStderr(), env)
	res, dest, err := mergeAndPublish(cmd, f, opts, parts, prog)
	prog.close(err) // the final state, before anything else is printed
	if err != nil {
		var terr *publish.TagError
		var u usageError
		if !errors.As(err, &terr) && !errors.As(err, &u) {
			err = nothingTagged{err} // tags come last: none was written
		}
		return err
	}
	return report(cmd, res, dest, outputFiles{metadata: f.metadataFile, dotenv: f.dotenv})
}

// mergeAndPublish plans the merge of parts, checks them in the registry,
// and publishes; tags are written last.
func mergeAndPublish(cmd *cobra.Command, f *mergeFlags, opts release.MergeOptions, parts []*part.File, prog *runProgress) (*release.Result, publish.Destination, error) {
	ctx := cmd.Context()
	log := prog.log
	imgOpts, rt, err := registry.WithRetries(opts.Images, f.retry.retries(), prog.retry)
	if err != nil {
		return nil, nil, err
	}
	defer registry.ReportRetries(log, rt)
	opts.Images, opts.Logger = imgOpts, log
	m, err := release.PlanMerge(parts, opts)
	if err != nil {
		return nil, nil, err
	}
	var refs []string
	for _, n := range m.Names() {
		for _, pl := range m.Naming()[n] {
			refs = append(refs, pl.Repository.String())
		}
	}
	prog.rep.Event(progress.Event{Kind: progress.KindStart, Message: cmd.CommandPath(), Destination: strings.Join(refs, ", "),
		Images: m.Names(), Platforms: platform.FormatAll(m.Platforms())})
	if f.dotenv != "" {
		var images []dotenvImage
		for _, n := range m.Names() {
			tagged := false
			for _, pl := range m.Naming()[n] {
				tagged = tagged || len(pl.Tags) > 0
			}
			images = append(images, dotenvImage{name: n, tagged: tagged})
		}
		if err := checkDotenvFile(f.dotenv, images); err != nil {
			return nil, nil, err
		}
	}
	dest, err := publish.NewRegistry(ctx, m.Naming(), m.Names(), imgOpts, log)
	if err != nil {
		return nil, nil, err
	}
	if err := dest.Hooks(ctx).Preflight(ctx); err != nil {
		return nil, nil, err
	}
	prog.phase(progress.KindPhaseStart, "check", fmt.Sprintf("check: %d parts, each manifest and config in the registry", len(parts)))
	res, err := m.Run(ctx)
	if err != nil {
		return nil, nil, err
	}
	prog.phase(progress.KindPhaseEnd, "check", publishOutcome(res))
	var images []publish.Image
	for _, img := range res.Images {
		images = append(images, img.Publish())
	}
	prog.phase(progress.KindPhaseStart, "publish", "publish: manifests by digest, checked, then tags")
	if err := dest.Publish(ctx, images); err != nil {
		return nil, nil, err
	}
	prog.phase(progress.KindPhaseEnd, "publish", publishOutcome(res))
	return res, dest, nil
}

// mergeInputs checks merge's flags before any part is read.
func mergeInputs(f *mergeFlags, env Env) (release.MergeOptions, error) {
	opts := release.MergeOptions{Repo: f.repo}
	if err := checkInsecure(f.insecure); err != nil {
		return opts, err
	}
	if err := f.retry.validate(); err != nil {
		return opts, err
	}
	if err := f.progress.validate(); err != nil {
		return opts, err
	}
	ps, all, err := parsePlatforms(f.platforms)
	if err != nil {
		return opts, err
	}
	if all {
		return opts, usagef("merge --platforms all: merge releases the platforms the parts were built for; list them in the index's order, or drop --platforms for the recipe's")
	}
	opts.Platforms = ps
	if f.repo != "" {
		if _, err := imageref.ParseRepository(f.repo+"/x", f.insecure); err != nil {
			return opts, usagef("--repo %q: %v", f.repo, err)
		}
	}
	if f.config != "" {
		if opts.Recipe, err = part.RecipeAt(f.config); err != nil {
			return opts, usagef("--config %s: %v", f.config, reason(err))
		}
	}
	if f.metadataFile != "" {
		if err := checkOutputFile("--metadata-file", f.metadataFile); err != nil {
			return opts, err
		}
	}
	opts.Images = imageref.Options{Keychain: keychain(env), Insecure: f.insecure, UserAgent: "helperbuild/" + version}
	return opts, nil
}

// partPaths expands merge's arguments: a file as is, a glob to what it
// matches, a directory to the *.json files in it; each file once, in
// order. An argument that gives no file is a usage error.
func partPaths(args []string) ([]string, error) {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, a := range args {
		if fi, err := os.Stat(a); err == nil {
			if !fi.IsDir() {
				add(a)
				continue
			}
			matches, _ := filepath.Glob(filepath.Join(globEscape(a), "*.json"))
			if len(matches) == 0 {
				return nil, usagef("part directory %s has no *.json files: did the jobs' artifacts reach this job (needs: / dependencies:)?", a)
			}
			for _, m := range matches {
				add(m)
			}
			continue
		}
		matches, err := filepath.Glob(a)
		if err != nil {
			return nil, usagef("part %q: %v", a, err)
		}
		if len(matches) == 0 {
			return nil, usagef("part %s: no such file, and no file matches it as a pattern", a)
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && !fi.IsDir() {
				add(m)
			}
		}
	}
	return out, nil
}

// globEscape escapes the glob metacharacters of a literal path.
func globEscape(p string) string {
	out := make([]rune, 0, len(p))
	for _, r := range p {
		if r == '*' || r == '?' || r == '[' || r == '\\' {
			out = append(out, '\\')
		}
		out = append(out, r)
	}
	return string(out)
}
