package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/release"
)

// buildFlags are the flags build and push share.
type buildFlags struct {
	platforms    string
	jobs         int
	level        int
	ldflags      string
	version      string
	revision     string
	branch       string
	source       string
	insecure     []string
	retry        retryFlags
	progress     progressFlags
	metadataFile string
	dotenv       string
	base         string
	binaryName   string
	tags         []string
	config       string
	images       []string
	repo         string
	output       string
	cacheDir     string
	noCache      bool
	byDigest     bool
	partFile     string
	relPlatforms string // --release-platforms
	attest       attestFlags
	run          bool // --run: the start-up runs of verify before anything is published
	sign         signFlags
}

// examples are build's (false) and push's (true).
var examples = map[bool]string{
	false: `  helperbuild build --platforms linux/amd64,linux/arm64
  helperbuild build --image gitlab-runner-helper --output oci-archive:out/helper.tar
  helperbuild build --base registry.example.com/group/alpine:3.20 --platforms all -v ./cmd/app`,
	true: `  helperbuild push --repo registry.example.com/group --tag v1.2.3
  helperbuild push --by-digest --platforms linux/arm64 --release-platforms linux/amd64,linux/arm64 --part-file parts/arm64.json
  helperbuild push --base registry.example.com/group/alpine:3.20 --tag registry.example.com/group/app:v1 ./cmd/app`,
}

func newBuildCmd(env Env, push bool, exec buildExec) *cobra.Command {
	f := &buildFlags{}
	use, short := "build [PACKAGE]", "Build images for every platform into an OCI layout or archive"
	if push {
		use, short = "push [PACKAGE]", "Build images for every platform and publish one multi-arch tag per image"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

With PACKAGE (a Go main package such as ./apps/gitlab-runner-helper, or its
absolute path inside the current directory), the binary is put at
/usr/bin/<name> on top of --base (default scratch, where it is the
entrypoint). Without it, the release is described by helperbuild.yaml (or
--config).`,
		Example: examples[push],
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("%s takes at most one package, got %d: %q", cmd.Name(), len(args), args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var pkg string
			if len(args) == 1 {
				pkg = args[0]
			}
			r, err := prepareBuild(cmd, env, f, pkg, push)
			if err != nil {
				return err
			}
			return exec(r, cmd)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.platforms, "platforms", "", `comma-separated os/arch[/variant][:os.version] list (windows/amd64:10.0.20348 is one Windows build; config-free mode), or "all" (default: the config's list; config-free: every Linux platform the base offers)`)
	fl.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "parallel compiles and layer writes")
	fl.IntVar(&f.level, "compression-level", release.DefaultCompressionLevel, "gzip level of new layers: 1 (fastest) to 9 (smallest, several times slower)")
	fl.StringVar(&f.ldflags, "ldflags", "", "go build -ldflags, templated: {{.Version}} {{.Revision}} {{.Branch}} {{.Date}} {{.Env.NAME}}")
	fl.StringVar(&f.version, "version", "", "release version (default: CI_COMMIT_TAG, else git describe --tags --always)")
	fl.StringVar(&f.revision, "revision", "", "source revision (default: CI_COMMIT_SHA, else git rev-parse HEAD)")
	fl.StringVar(&f.branch, "branch", "", "source branch (default: CI_COMMIT_REF_NAME, else the current git branch)")
	fl.StringVar(&f.source, "source", "", "source repository URL for org.opencontainers.image.source (default: CI_PROJECT_URL, else the git remote)")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, "HOST[:PORT] that may be reached over plain HTTP or with an unverified certificate (repeatable)")
	f.retry.register(fl)
	f.progress.register(cmd)
	f.attest.register(fl)
	fl.BoolVar(&f.run, "run", false, "images whose recipe names a contract: start each platform's image in a sandbox as GitLab starts it (verify --run) before anything is published")
	fl.StringVar(&f.metadataFile, "metadata-file", "", "write the result (digests, tags, platforms, sizes) as JSON to this file (docs/metadata.md)")
	fl.StringVar(&f.dotenv, "dotenv", "", "write each image's pinned reference and tag as GitLab CI variables (artifacts:reports:dotenv) to this file")
	fl.StringVar(&f.base, "base", "", "config-free: base image (registry reference, oci:DIR[:TAG], oci-archive:FILE[:TAG] or scratch; default scratch, enough for a static Go binary)")
	fl.StringVar(&f.binaryName, "binary-name", "", "config-free: name of the binary in /usr/bin (default: PACKAGE's directory name; for . the module path's last element)")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "keep binaries, layers and base images here between runs (default: $XDG_CACHE_HOME/helperbuild or ~/.cache/helperbuild)")
	fl.BoolVar(&f.noCache, "no-cache", false, "keep nothing between runs")
	fl.StringVar(&f.config, "config", "", "recipe file (default: helperbuild.yaml in the current directory)")
	fl.StringArrayVar(&f.images, "image", nil, "build only this image of the config (repeatable)")
	fl.StringVar(&f.repo, "repo", "", "push: repository prefix, an image's reference is PREFIX/<image name> (default: CI_REGISTRY_IMAGE); config-free, a --tag without a registry goes to PREFIX/<binary name>")
	_ = cmd.RegisterFlagCompletionFunc("platforms", completePlatforms(true))
	_ = cmd.RegisterFlagCompletionFunc("compression-level", completeLevel)
	_ = cmd.RegisterFlagCompletionFunc("attest", completeAttest)
	_ = cmd.RegisterFlagCompletionFunc("provenance", completeProvenance)
	_ = cmd.RegisterFlagCompletionFunc("image", completeImages)
	if push {
		fl.StringArrayVar(&f.tags, "tag", nil, "config-free: reference to tag, e.g. registry.example.com/group/helper:v1.2.3, or TAG with --repo; recipe: a tag every image also gets (repeatable)")
		f.sign.register(fl)
		fl.BoolVar(&f.byDigest, "by-digest", false, "one CI job's share of a release: push blobs and platform manifests, write no tag, write --part-file for helperbuild merge")
		fl.StringVar(&f.partFile, "part-file", "", "with --by-digest: write the part file (JSON, see docs/fanout.md) here, e.g. parts/$CI_JOB_ID.json")
		fl.StringVar(&f.relPlatforms, "release-platforms", "", "with --by-digest: the whole release's platforms in index order, as merge will join them; it names every --platforms entry (default: the recipe's platforms; config-free: --platforms)")
		_ = cmd.RegisterFlagCompletionFunc("release-platforms", completePlatforms(false))
	} else {
		fl.StringArrayVar(&f.tags, "tag", nil, "config-free: name of the layout entry (default latest); recipe: a tag every image's entries also get (repeatable)")
		fl.StringVar(&f.output, "output", "oci:out/oci", "where to write: oci:DIR or oci-archive:FILE.tar")
		_ = cmd.RegisterFlagCompletionFunc("output", completeOutput)
		_ = fl.MarkHidden("repo") // refused with the way out (checkModeFlags), not offered
	}
	return cmd
}

// absDir returns the absolute form of dir.
func absDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	a, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(a); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return a, nil
}

// cacheDir is --cache-dir, else $XDG_CACHE_HOME/helperbuild, else
// ~/.cache/helperbuild, and where it came from (for the error when it
// cannot be created); "" (no cache) with --no-cache or no home.
func cacheDir(env Env, f *buildFlags) (dir, from string) {
	switch {
	case f.noCache:
		return "", ""
	case f.cacheDir != "":
		return f.cacheDir, "--cache-dir " + f.cacheDir
	case env.Get("XDG_CACHE_HOME") != "":
		dir = filepath.Join(env.Get("XDG_CACHE_HOME"), "helperbuild")
	case env.Get("HOME") != "":
		dir = filepath.Join(env.Get("HOME"), ".cache", "helperbuild")
	default:
		return "", ""
	}
	return dir, "the cache directory " + dir + " (from XDG_CACHE_HOME or HOME)"
}

// parseReleasePlatforms reads --release-platforms; nil when not given.
func parseReleasePlatforms(cmd *cobra.Command, f *buildFlags) ([]v1.Platform, error) {
	if strings.TrimSpace(f.relPlatforms) == "" {
		return nil, nil
	}
	ps, all, err := parsePlatforms(cmd, "release-platforms", f.relPlatforms)
	if err != nil {
		return nil, err
	}
	if all {
		return nil, usagef("--release-platforms all: list the release's platforms in the index's order, e.g. --release-platforms linux/amd64,linux/arm64")
	}
	return ps, nil
}
