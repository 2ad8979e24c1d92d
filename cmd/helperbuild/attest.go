package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/release"
)

// attestFlags are --attest, --provenance and --attest-dir.
type attestFlags struct {
	mode       string
	provenance string
	dir        string
}

func (f *attestFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.mode, "attest", string(release.AttestIndex), "where each platform image's SPDX SBOM and SLSA provenance go: index (in the image index, as docker buildx does; every registry, layouts included), referrers (OCI 1.1 referrers: the registry's referrers API, else the sha256-<digest> fallback tag) or none")
	fl.StringVar(&f.provenance, "provenance", string(attest.ProvenanceMin), "provenance detail: min (nothing run-specific: the index digest stays reproducible) or max (adds the CI job, runner and start/finish times: the index digest then changes on every run)")
	fl.StringVar(&f.dir, "attest-dir", "", "also write each platform's statements as files under this directory (IMAGE/OS-ARCH[-VARIANT]/{sbom.spdx.json,sbom.intoto.json,provenance.intoto.json})")
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// attestOptions turns the flags, the environment and the release metadata
// into release.Attest, failing before anything compiles. recipePath is
// the helperbuild.yaml read ("" in config-free mode); layout says the
// destination is an OCI layout or archive.
func (f *attestFlags) options(env Env, meta manifest.Meta, recipePath string, layout bool) (release.Attest, error) {
	mode, err := release.ParseAttestMode(f.mode)
	if err != nil {
		return release.Attest{}, usageError{err}
	}
	prov, err := attest.ParseProvenanceMode(f.provenance)
	if err != nil {
		return release.Attest{}, usagef("--provenance %q: want min or max", f.provenance)
	}
	if mode == release.AttestNone {
		if f.dir != "" {
			return release.Attest{}, usagef("--attest-dir %s with --attest none: there is nothing to write; drop one of them", f.dir)
		}
		return release.Attest{Mode: mode}, nil
	}
	if mode == release.AttestReferrers && layout {
		return release.Attest{}, usagef("--attest referrers: an OCI layout or archive holds no referrers; use --attest index (or push to a registry)")
	}
	if meta.Revision != "" && !fullCommit.MatchString(meta.Revision) {
		return release.Attest{}, usagef("revision %q: the provenance names the source by its full commit id; pass --revision \"$(git rev-parse HEAD)\" (or --attest none)", meta.Revision)
	}
	if f.dir != "" {
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			return release.Attest{}, usagef("--attest-dir %s: %v", f.dir, reason(err))
		}
	}
	out := release.Attest{
		Mode:       mode,
		Provenance: prov,
		Source:     attest.Source{URL: meta.Source, Ref: sourceRef(env), Commit: meta.Revision},
		CI: attest.CI{ServerURL: env.Get("CI_SERVER_URL"), ProjectPath: env.Get("CI_PROJECT_PATH"),
			JobURL: env.Get("CI_JOB_URL"), RunnerID: env.Get("CI_RUNNER_ID"), RunnerVersion: env.Get("CI_RUNNER_VERSION")},
		HelperbuildVersion: version,
	}
	if recipePath != "" {
		rec, err := recipeOf(env, recipePath)
		if err != nil {
			return release.Attest{}, err
		}
		out.Recipe = rec
	}
	return out, nil
}

// sourceRef is the git ref built, from GitLab CI's variables: the tag, else
// the branch; "" outside CI (the commit still names the source).
func sourceRef(env Env) string {
	if t := env.Get("CI_COMMIT_TAG"); t != "" {
		return "refs/tags/" + t
	}
	if b := env.Get("CI_COMMIT_BRANCH"); b != "" {
		return "refs/heads/" + b
	}
	return ""
}

// recipeOf is the recipe file's path relative to the source root
// (CI_PROJECT_DIR in CI, else the working directory; its name alone when
// it lies outside) and its digest.
func recipeOf(env Env, path string) (attest.Recipe, error) {
	named, err := part.RecipeAt(path)
	if err != nil {
		return attest.Recipe{}, usagef("recipe %s: %v", path, reason(err))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return attest.Recipe{}, err
	}
	root := env.Get("CI_PROJECT_DIR")
	if root == "" {
		if root, err = os.Getwd(); err != nil {
			return attest.Recipe{}, err
		}
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = filepath.Base(abs)
	}
	return attest.Recipe{Path: filepath.ToSlash(rel), Digest: named.Digest}, nil
}

// writeAttestDir writes every platform's statements and SPDX document
// under dir: IMAGE/OS-ARCH[-VARIANT]/, each file whole or not at all (a
// CI artifact collector never takes half a statement).
func writeAttestDir(dir string, res *release.Result) error {
	for _, img := range res.Images {
		for _, p := range img.Platforms {
			at := p.Attestation
			if at == nil || at.SPDX == nil {
				continue // none, or a merge's (digests only)
			}
			pd := filepath.Join(dir, img.Name, strings.ReplaceAll(platform.Format(p.Platform), "/", "-"))
			if err := os.MkdirAll(pd, 0o755); err != nil {
				return fmt.Errorf("--attest-dir: %w", err)
			}
			for name, data := range map[string][]byte{
				"sbom.spdx.json":         at.SPDX,
				"sbom.intoto.json":       at.SBOM.JSON,
				"provenance.intoto.json": at.Provenance.JSON,
			} {
				if err := outfile.WriteBytes(filepath.Join(pd, name), data); err != nil {
					return fmt.Errorf("--attest-dir: %w", err)
				}
			}
		}
	}
	return nil
}
