package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/release"
	"github.com/helperbuild/helperbuild/internal/scaffold"
)

// The files init writes, relative to the module root. When the project
// already has a .gitlab-ci.yml, the fragment goes to its own file, to be
// included from it.
const (
	initRecipe     = "helperbuild.yaml"
	initCI         = ".gitlab-ci.yml"
	initCIFragment = ".gitlab/ci/helperbuild.gitlab-ci.yml"
	// templateProject is where GitLab CI includes the release template from.
	templateProject = "helperbuild/helperbuild"
)

type initFlags struct {
	base     string
	stdout   bool
	offline  bool
	insecure []string
}

func newInitCmd(env Env) *cobra.Command {
	f := &initFlags{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a helperbuild.yaml and a GitLab CI fragment for the Go module here",
		Long: `Write a helperbuild.yaml and a GitLab CI fragment inferred from the Go module in
the current directory (a gitlab-runner fork first of all): its helper and runner main
packages, the -X variables of its common package, the built-in Dockerfiles, the five
platforms GitLab publishes and GitLab's <arch>-v<version> tags. The CI fragment is
.gitlab-ci.yml, or .gitlab/ci/helperbuild.gitlab-ci.yml when .gitlab-ci.yml exists.
Existing files are never overwritten.`,
		Example: `  helperbuild init
  helperbuild init --base registry.example.com/group/alpine:3.20 --stdout`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("init takes no arguments, got %q; run it in the module's directory", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return runInit(cmd, env, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.base, "base", "scratch", "BASE_IMAGE of every image: a multi-arch base with what GitLab Runner needs (scratch: the binaries alone, builds with no registry)")
	fl.BoolVar(&f.stdout, "stdout", false, "print the files instead of writing them")
	fl.BoolVar(&f.offline, "offline", false, "write the files without reading --base to check that it has every platform they list")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, "HOST[:PORT] of --base that may be reached over plain HTTP or with an unverified certificate (repeatable)")
	return cmd
}

func runInit(cmd *cobra.Command, env Env, f *initFlags) error {
	if err := scaffold.CheckBase(f.base); err != nil {
		return usageError{err}
	}
	dir, err := absDir(".")
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return usagef("no go.mod in %s: run helperbuild init at the root of the Go module", dir)
	}
	ciPath := initCI
	if exists(filepath.Join(dir, initCI)) {
		ciPath = initCIFragment
	}
	if !f.stdout {
		// Nothing is written unless every file can be.
		for _, p := range []string{initRecipe, ciPath} {
			if exists(filepath.Join(dir, p)) {
				return usagef("%s already exists in %s; init never overwrites: move it away, or print the files with --stdout", p, dir)
			}
		}
	}
	reg := release.Registry{Keychain: keychain(env), Insecure: f.insecure, UserAgent: "helperbuild/" + version}
	if err := release.CheckInitBase(cmd.Context(), f.base, f.offline, scaffold.Platforms, reg); err != nil {
		return err // nothing written
	}
	repo, err := scaffold.Inspect(cmd.Context(), dir, "go", env)
	if err != nil {
		return err
	}
	recipe, err := scaffold.Recipe(repo, f.base)
	if err != nil {
		return usageError{err}
	}
	ref, refComment, err := scaffold.TemplateRef(stamp())
	if err != nil {
		return err
	}
	ci := scaffold.CI(repo, templateProject, ref, refComment)
	out := cmd.OutOrStdout()
	if f.stdout {
		fmt.Fprintf(out, "# --- %s\n%s\n# --- %s\n%s", initRecipe, recipe, ciPath, ci)
		return nil
	}
	if err := writeNew(dir, initRecipe, recipe); err != nil {
		return err
	}
	if err := writeNew(dir, ciPath, ci); err != nil {
		_ = os.Remove(filepath.Join(dir, initRecipe)) // all or nothing
		return err
	}
	fmt.Fprintf(out, "wrote %s and %s\n", initRecipe, ciPath)
	if ciPath == initCIFragment {
		fmt.Fprintf(out, "add it to %s:\n  include:\n    - local: %s\n", initCI, initCIFragment)
		data, err := os.ReadFile(filepath.Join(dir, initCI))
		if missing, merr := scaffold.MissingStages(data, scaffold.TemplateStages); err != nil || merr != nil {
			fmt.Fprintf(out, "check that the stages: of %s hold %s (%v)\n", initCI, strings.Join(scaffold.TemplateStages, " and "), errors.Join(err, merr))
		} else if len(missing) > 0 {
			fmt.Fprintf(out, "and add to its stages: %s (the template's jobs run in stages %s; or set the inputs build-stage and release-stage)\n", strings.Join(missing, ", "), strings.Join(scaffold.TemplateStages, " and "))
		}
	}
	fmt.Fprintf(out, "the CI fragment includes the release template from the project %s on your GitLab: mirror %s there (ref %s must be in it)\n", templateProject, scaffold.TemplateRepository, ref)
	if added, err := scaffold.IgnoreOutput(dir); err != nil {
		return fmt.Errorf(".gitignore: %w", err)
	} else if added {
		fmt.Fprintln(out, "added /out/ (build's output) to .gitignore")
	}
	fmt.Fprintln(out, "next: helperbuild build   (an OCI layout in out/oci; check it with helperbuild verify)")
	return nil
}

// writeNew creates dir/name with data; an existing file is an error, never
// overwritten.
func writeNew(dir, name string, data []byte) error {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	file, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return usagef("%s already exists in %s; init never overwrites", name, dir)
	}
	if err != nil {
		return err
	}
	if _, err := file.Write(data); err != nil {
		file.Close()
		os.Remove(p)
		return err
	}
	return file.Close()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
