package main

import (
	"bytes"
	"crypto/elliptic"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/release"
)

// flagsRecipe is recipeYAML whose ldflags and tags show the version and
// branch, plus a second image.
func flagsRecipe() string {
	r := strings.NewReplacer(
		"\nbinaries:\n", "\nbuild:\n  ldflags: -X main.version={{.Version}} -X main.branch={{.Branch}}\nbinaries:\n",
		"tags: [v1]", `tags: ["{{.Version}}"]`,
	).Replace(recipeYAML)
	return r + "  - name: app2\n    dockerfile: Dockerfile\n    contexts: {binary_dir: \"binaries:\"}\n    tags: [\"{{.Version}}\", latest]\n"
}

// prepared runs helperbuild with args up to the point where everything is
// checked and nothing compiled, and returns what build or push would run.
func prepared(t *testing.T, args []string) (r *buildRun, code int, stderr string) {
	t.Helper()
	env := Env(relEnv(t))
	root := newRootCmd(env, func(got *buildRun, _ *cobra.Command) error {
		r = got
		return nil
	})
	var out, errb bytes.Buffer
	code = runRoot(t.Context(), env, root, args, &out, &errb)
	return r, code, errb.String()
}

// use is how one flag is used in one mode: args (the flag, and what else
// it needs) either work, and check sees the effect, or are a usage error
// whose one line contains err.
type use struct {
	args  []string
	err   string
	check func(t *testing.T, r *buildRun)
}

func imageTags(r *buildRun) [][]string {
	var out [][]string
	for _, img := range r.Plan.Images {
		out = append(out, img.Tags)
	}
	return out
}

func tagRefs(r *buildRun) []string {
	var out []string
	tags, _ := r.Dest.Naming.(publish.ByTags)
	for _, t := range tags {
		out = append(out, t.String())
	}
	return out
}

// TestEveryFlagInBothModes: every flag of build and push either does what
// it says in config-free mode and in recipe mode, or is a usage error (exit
// 2, one line) saying why and what to use instead. The flags come from the
// commands themselves: a new flag without a row fails.
func TestEveryFlagInBothModes(t *testing.T) {
	same := func(args []string, check func(t *testing.T, r *buildRun)) [2]use {
		return [2]use{{args: args, check: check}, {args: args, check: check}}
	}
	tmp := t.TempDir()
	// Rows by flag, or "build --flag" / "push --flag" where the commands
	// differ; [0] is config-free mode, [1] recipe mode.
	rows := map[string][2]use{
		"platforms": same([]string{"--platforms", "linux/arm64,linux/s390x"}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, "linux/arm64,linux/s390x", platform.FormatList(recipe.Values(r.Plan.Platforms)))
		}),
		"jobs":              same([]string{"--jobs", "3"}, func(t *testing.T, r *buildRun) { assert.Equal(t, 3, r.Jobs) }),
		"compression-level": same([]string{"--compression-level", "9"}, func(t *testing.T, r *buildRun) { assert.Equal(t, 9, r.CompressionLevel) }),
		"version": same([]string{"--version", "v9.9.9"}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, "v9.9.9", r.Meta.Version)
			assert.Contains(t, r.Plan.Ldflags, "main.version=v9.9.9")
		}),
		"revision": same([]string{"--revision", "cafe0000000000000000000000000000000000ca"}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, "cafe0000000000000000000000000000000000ca", r.Meta.Revision)
		}),
		"branch": same([]string{"--branch", "17-10-stable"}, func(t *testing.T, r *buildRun) {
			assert.Contains(t, r.Plan.Ldflags, "main.branch=17-10-stable")
		}),
		"source": same([]string{"--source", "https://example.com/r"}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, "https://example.com/r", r.Meta.Source)
		}),
		"insecure-registry": same([]string{"--insecure-registry", "registry.local:5000"}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, []string{"registry.local:5000"}, r.Registry.Insecure)
		}),
		"retries":  same([]string{"--retries", "7"}, func(t *testing.T, r *buildRun) { assert.Equal(t, 7, r.Registry.Retries) }),
		"timeout":  same([]string{"--timeout", "9s"}, func(t *testing.T, r *buildRun) { assert.Equal(t, 9*time.Second, r.Registry.Timeout) }),
		"progress": same([]string{"--progress", "json"}, func(t *testing.T, r *buildRun) { assert.Equal(t, "json", r.progress.mode) }),
		"verbose":  same([]string{"-v"}, func(t *testing.T, r *buildRun) { assert.True(t, r.progress.verbose) }),
		"metadata-file": same([]string{"--metadata-file", filepath.Join(tmp, "m.json")}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, filepath.Join(tmp, "m.json"), r.Outputs.Metadata)
		}),
		"dotenv": same([]string{"--dotenv", filepath.Join(tmp, "build.env")}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, filepath.Join(tmp, "build.env"), r.Outputs.Dotenv)
		}),
		"cache-dir": same([]string{"--cache-dir", filepath.Join(tmp, "cache")}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, filepath.Join(tmp, "cache"), r.CacheDir)
			assert.DirExists(t, r.CacheDir)
		}),
		"attest": same([]string{"--attest", "none"}, func(t *testing.T, r *buildRun) { assert.Equal(t, release.AttestNone, r.AttestOptions.Mode) }),
		"run":    same([]string{"--run"}, func(t *testing.T, r *buildRun) { assert.True(t, r.Run) }),
		"build --attest-dir": same([]string{"--attest-dir", filepath.Join(tmp, "att")}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, filepath.Join(tmp, "att"), r.Outputs.AttestDir)
			assert.DirExists(t, r.Outputs.AttestDir, "made before anything compiles")
		}),
		"push --attest-dir": same([]string{"--attest-dir", filepath.Join(tmp, "att")}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, filepath.Join(tmp, "att"), r.Outputs.AttestDir)
		}),
		"push --sign": same([]string{"--sign", "--sign-key", plainKey(t, tmp), "--sign-tlog", "none"}, func(t *testing.T, r *buildRun) {
			require.NotNil(t, r.Sign)
			assert.Equal(t, "auto", r.Sign.Format)
			assert.Empty(t, r.Sign.RekorURL, "--sign-tlog none: no log")
			assert.NotEmpty(t, r.SignedBy())
		}),
		"push --sign-key": same([]string{"--sign", "--sign-key", plainKey(t, tmp)}, func(t *testing.T, r *buildRun) {
			require.NotNil(t, r.Sign)
			assert.NotEmpty(t, r.Sign.KeyPEM)
			assert.True(t, strings.HasPrefix(r.SignedBy(), "key "), r.SignedBy())
		}),
		"push --sign-format": same([]string{"--sign", "--sign-key", plainKey(t, tmp), "--sign-format", "legacy"}, func(t *testing.T, r *buildRun) {
			require.NotNil(t, r.Sign)
			assert.Equal(t, "legacy", r.Sign.Format)
		}),
		"push --sign-tlog": same([]string{"--sign", "--sign-key", plainKey(t, tmp), "--sign-tlog", "https://rekor.example.test"}, func(t *testing.T, r *buildRun) {
			require.NotNil(t, r.Sign)
			assert.Equal(t, "https://rekor.example.test", r.Sign.RekorURL)
		}),
		"push --sign-fulcio-url": same([]string{"--sign-fulcio-url", "https://fulcio.example.test"}, func(t *testing.T, r *buildRun) {
			assert.Nil(t, r.Sign, "without --sign nothing signs")
			assert.Empty(t, r.SignedBy())
		}),
		"provenance": same([]string{"--provenance", "max"}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, attest.ProvenanceMax, r.AttestOptions.Provenance)
			assert.Equal(t, release.AttestIndex, r.AttestOptions.Mode, "index by default")
		}),
		"no-cache": same([]string{"--no-cache"}, func(t *testing.T, r *buildRun) { assert.Empty(t, r.CacheDir) }),
		"base": {
			{args: []string{"--base", "registry.example.com/base:1"}, check: func(t *testing.T, r *buildRun) {
				assert.Equal(t, "registry.example.com/base:1", r.Plan.Images[0].Args["BASE"])
			}},
			{args: []string{"--base", "registry.example.com/base:1"}, err: "--base is for config-free mode: give the Go main package too (helperbuild CMD --base registry.example.com/base:1 ./cmd/app); in helperbuild.yaml the base is the Dockerfile's FROM: args: {BASE_IMAGE: registry.example.com/base:1}, or per platform base: {linux/arm64: REF}"},
		},
		"binary-name": {
			{args: []string{"--binary-name", "helper"}, check: func(t *testing.T, r *buildRun) {
				assert.Equal(t, "helper", r.Plan.Images[0].Name)
				// No --platforms: the base decides, and the plan names the binary for them.
				plan, err := r.Plan.ForBasePlatforms([]v1.Platform{{OS: "linux", Architecture: "amd64"}})
				require.NoError(t, err)
				assert.Equal(t, "helper-linux-amd64", plan.Platforms[0].Outputs[0])
			}},
			{args: []string{"--binary-name", "helper"}, err: "--binary-name is for config-free mode: give the Go main package too; in helperbuild.yaml a binary is named by its binaries[].output"},
		},
		"ldflags": {
			{args: []string{"--ldflags", "-X main.v={{.Version}}"}, check: func(t *testing.T, r *buildRun) {
				assert.Equal(t, "-X main.v=v1.0.0", r.Plan.Ldflags)
			}},
			{args: []string{"--ldflags", "-s"}, err: "--ldflags is for config-free mode: give the Go main package too; in helperbuild.yaml set build.ldflags"},
		},
		"config": {
			{args: []string{"--config", "other.yaml"}, err: "--config is for recipe mode, but CMD was given a package (./cmd/app)"},
			{args: []string{"--config", "other.yaml"}, check: func(t *testing.T, r *buildRun) {
				require.Len(t, r.Plan.Images, 1)
				assert.Equal(t, "other", r.Plan.Images[0].Name)
			}},
		},
		"image": {
			{args: []string{"--image", "app2"}, err: "--image selects images of helperbuild.yaml, but CMD was given a package (./cmd/app)"},
			{args: []string{"--image", "app2"}, check: func(t *testing.T, r *buildRun) {
				require.Len(t, r.Plan.Images, 1)
				assert.Equal(t, "app2", r.Plan.Images[0].Name)
			}},
		},
		"build --repo": {
			{args: []string{"--repo", "registry.example.com/g"}, err: "--repo names where push publishes; build writes to --output"},
			{args: []string{"--repo", "registry.example.com/g"}, err: "--repo names where push publishes; build writes to --output"},
		},
		"push --repo": {
			{args: []string{"--repo", "registry.example.com/other", "--tag", "v2"}, check: func(t *testing.T, r *buildRun) {
				assert.Equal(t, []string{"registry.example.com/g/app:v1", "registry.example.com/other/app:v2"}, tagRefs(r))
			}},
			{args: []string{"--repo", "registry.example.com/other"}, check: func(t *testing.T, r *buildRun) {
				var repos []string
				dest, end, err := r.Open(t.Context())
				require.NoError(t, err)
				defer end()
				for _, repo := range dest.(*publish.Registry).Repositories() {
					repos = append(repos, repo.String())
				}
				assert.Equal(t, []string{"registry.example.com/other/app", "registry.example.com/other/app2"}, repos)
			}},
		},
		"build --tag": {
			{args: []string{"--tag", "v2", "--tag", "stable"}, check: func(t *testing.T, r *buildRun) {
				assert.Equal(t, [][]string{{"v2", "stable"}}, imageTags(r))
			}},
			{args: []string{"--tag", "stable"}, check: func(t *testing.T, r *buildRun) {
				assert.Equal(t, [][]string{{"v1.0.0", "stable"}, {"v1.0.0", "latest", "stable"}}, imageTags(r))
			}},
		},
		"push --tag": {
			{args: []string{"--tag", "registry.example.com/g/app:stable"}, check: func(t *testing.T, r *buildRun) {
				assert.Equal(t, []string{"registry.example.com/g/app:v1", "registry.example.com/g/app:stable"}, tagRefs(r))
			}},
			{args: []string{"--tag", "stable"}, check: func(t *testing.T, r *buildRun) {
				assert.Equal(t, [][]string{{"v1.0.0", "stable"}, {"v1.0.0", "latest", "stable"}}, imageTags(r))
			}},
		},
		"push --by-digest": same([]string{"--by-digest", "--part-file", filepath.Join(tmp, "part.json")}, func(t *testing.T, r *buildRun) {
			dest, end, err := r.Open(t.Context())
			require.NoError(t, err)
			defer end()
			bd, ok := dest.(*publish.ByDigest)
			require.True(t, ok, "a by-digest destination, got %T", dest)
			assert.Equal(t, filepath.Join(tmp, "part.json"), bd.PartFile)
			assert.Equal(t, "v1.0.0", bd.Part.Version)
		}),
		"push --release-platforms": same([]string{"--by-digest", "--part-file", filepath.Join(tmp, "part.json"), "--platforms", "linux/amd64",
			"--release-platforms", "linux/arm64,linux/amd64"}, func(t *testing.T, r *buildRun) {
			want := []v1.Platform{{OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "amd64"}}
			assert.Equal(t, want, r.AttestOptions.Platforms, "the provenance names the release's platforms")
			assert.Equal(t, []string{"linux/arm64", "linux/amd64"}, r.Dest.Part.Platforms, "so does the part, for merge")
			assert.Equal(t, []v1.Platform{{OS: "linux", Architecture: "amd64"}}, recipe.Values(r.Plan.Platforms), "the job builds its --platforms")
		}),
		"push --part-file": {
			{args: []string{"--part-file", filepath.Join(tmp, "part.json")}, err: "is written by push --by-digest only; add --by-digest"},
			{args: []string{"--part-file", filepath.Join(tmp, "part.json")}, err: "is written by push --by-digest only; add --by-digest"},
		},
		"build --output": same([]string{"--output", "oci-archive:" + filepath.Join(tmp, "x.tar")}, func(t *testing.T, r *buildRun) {
			assert.Equal(t, filepath.Join(tmp, "x.tar"), r.Dest.Output.Path)
		}),
	}

	dir := relModule(t)
	relWrite(t, dir, map[string]string{
		"helperbuild.yaml": flagsRecipe(),
		"other.yaml":       strings.Replace(recipeYAML, "name: app", "name: other", 1),
		"Dockerfile":       okDockerfile,
	})
	t.Chdir(dir)
	used := map[string]bool{}
	for _, name := range []string{"build", "push"} {
		cmd, _, err := NewRootCmd(nil).Find([]string{name})
		require.NoError(t, err)
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if fl.Name == "help" {
				return
			}
			key := name + " --" + fl.Name
			row, ok := rows[key]
			if !ok {
				row, ok = rows[fl.Name]
				key = fl.Name
			}
			if !ok {
				t.Errorf("%s --%s has no row: say what it does in config-free and in recipe mode", name, fl.Name)
				return
			}
			used[key] = true
			for mode, u := range row {
				args := []string{name, "--version", "v1.0.0"}
				if mode == 0 {
					args = append(args, "--base", "scratch", "--ldflags", "-X main.version={{.Version}} -X main.branch={{.Branch}}")
					if name == "push" {
						args = append(args, "--tag", "registry.example.com/g/app:v1")
					}
				} else if name == "push" {
					args = append(args, "--repo", "registry.example.com/g")
				}
				args = append(args, u.args...)
				if mode == 0 {
					args = append(args, "./cmd/app")
				}
				t.Run(strings.Join(args, " "), func(t *testing.T) {
					r, code, stderr := prepared(t, args)
					if u.err != "" {
						assert.Equal(t, 2, code, "a usage error")
						assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
						assert.Contains(t, stderr, strings.ReplaceAll(u.err, "CMD", name))
						return
					}
					require.Equal(t, 0, code, stderr)
					require.NotNil(t, r)
					u.check(t, r)
				})
			}
		})
	}
	for key := range rows {
		assert.True(t, used[key], "row %q matches no flag", key)
	}
}

// TestModeConflicts: combinations that cannot all be honoured are usage
// errors before anything compiles.
func TestModeConflicts(t *testing.T) {
	dir := relModule(t)
	relWrite(t, dir, map[string]string{"helperbuild.yaml": flagsRecipe(), "Dockerfile": okDockerfile})
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{args: []string{"build", "--cache-dir", "c", "--no-cache"}, want: "--cache-dir c and --no-cache contradict each other; give one"},
		{args: []string{"push", "--repo", "registry.example.com/g", "--tag", "registry.example.com/g/app:v1"},
			want: `--tag "registry.example.com/g/app:v1": with helperbuild.yaml, --tag is a tag every image also gets (registry.example.com/g/<image>:TAG); give a tag such as v1.2.3, the repository comes from --repo`},
		{args: []string{"push", "--repo", "registry.example.com/g", "--tag", "v1+x"}, want: `--tag "v1+x": '+' (character 3) is not allowed in a tag`},
		{args: []string{"build", "--tag", "v1+x"}, want: `--tag "v1+x": want a tag name such as v1.2.3: '+' (character 3) is not allowed in a tag`},
		{args: []string{"push", "--base", "scratch", "--tag", "v1", "./cmd/app"},
			want: `--tag "v1": name the registry, e.g. registry.example.com/group/app:v1.2.3 (docker.io/... for Docker Hub), or give --repo registry.example.com/group and --tag v1.2.3`},
		{args: []string{"push", "--base", "scratch", "--repo", "registry.example.com/g", "--tag", "registry.example.com/x/app:v1", "./cmd/app"},
			want: "--repo registry.example.com/g: every --tag names its registry, so --repo would change nothing"},
		{args: []string{"push", "--base", "scratch", "./cmd/app"}, want: "push needs --tag REGISTRY/REPOSITORY:TAG"},
		{args: []string{"push", "--repo", "registry.example.com/g", "--by-digest"}, want: "push --by-digest writes a part file for merge: give --part-file FILE"},
		{args: []string{"push", "--repo", "registry.example.com/g", "--by-digest", "--part-file", "helperbuild.yaml/p.json"}, want: "--part-file helperbuild.yaml/p.json: helperbuild.yaml is not a directory"},
		{args: []string{"push", "--repo", "registry.example.com/g", "--release-platforms", "linux/amd64"},
			want: "--release-platforms names the whole release of a push --by-digest job; add --by-digest, or drop it"},
		{args: []string{"push", "--repo", "registry.example.com/g", "--by-digest", "--part-file", "p.json", "--release-platforms", "linux/arm64,linux/s390x", "--version", "v1"},
			want: "--release-platforms linux/arm64,linux/s390x lacks linux/amd64, which this job builds; the release's list names every job's platforms"},
		{args: []string{"push", "--base", "scratch", "--tag", "registry.example.com/g/app:v1", "--by-digest", "--part-file", "p.json",
			"--platforms", "linux/amd64,linux/arm64", "--release-platforms", "linux/amd64", "./cmd/app"},
			want: "--release-platforms linux/amd64 lacks linux/arm64, which this job builds"},
		{args: []string{"push", "--base", "scratch", "--tag", "registry.example.com/g/app:v1", "--by-digest", "--part-file", "p.json",
			"--release-platforms", "linux/amd64", "./cmd/app"},
			want: "--release-platforms with a config-free push --by-digest: give --platforms too, the platforms of this job"},
		{args: []string{"push", "--repo", "registry.example.com/g", "--by-digest", "--part-file", "p.json", "--release-platforms", "all"},
			want: "--release-platforms all: list the release's platforms in the index's order"},
		{args: []string{"push", "--repo", "registry.example.com/g", "--by-digest", "--part-file", "p.json", "--release-platforms", "linux/amd64,plan9"},
			want: "--release-platforms: "},
		{args: []string{"push", "--repo", "registry.example.com/g", "--by-digest", "--part-file", "p.json", "--dotenv", "job.env"},
			want: "--dotenv job.env with --by-digest: a job tags nothing, so there is no reference to report; give --dotenv to helperbuild merge"},
		{args: []string{"build", "--base", "scratch", "--platforms", "all", "./cmd/app"}, want: "--platforms all means every platform the base offers, and scratch offers none"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, code, stderr := prepared(t, tc.args)
			assert.Equal(t, 2, code, stderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}

	// In GitLab CI, a bare config-free --tag goes to CI_REGISTRY_IMAGE/<binary>.
	env := Env(relEnv(t, "CI_REGISTRY_IMAGE=registry.example.com/group/project"))
	root := newRootCmd(env, func(r *buildRun, _ *cobra.Command) error {
		assert.Equal(t, []string{"registry.example.com/group/project/app:v1"}, tagRefs(r))
		return nil
	})
	var out, errb bytes.Buffer
	assert.Equal(t, 0, runRoot(t.Context(), env, root, []string{"push", "--base", "scratch", "--tag", "v1", "./cmd/app"}, &out, &errb), errb.String())
}

// plainKey writes a plain PKCS#8 ECDSA P-256 key (no password) into dir.
func plainKey(t *testing.T, dir string) string {
	t.Helper()
	p, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), nil)
	require.NoError(t, err)
	path := filepath.Join(dir, "plain.key")
	require.NoError(t, os.WriteFile(path, p, 0o600))
	return path
}
