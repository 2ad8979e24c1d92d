//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/helperbuild/helperbuild/internal/fixture/gitlabbase"
)

// gitlabBaseCacheDir is where scripts/install-test-deps.sh keeps the .debs of the
// GitLab-like bases (internal/fixture/gitlabbase).
func gitlabBaseCacheDir() string {
	return filepath.Join(filepath.Dir(busyboxCacheDir()), "gitlab-base")
}

// buildGitLabBase writes a five-platform GitLab-like base of kind, with defect seeded, to
// the OCI layout dir, tagged baseTag: real Debian bash-static, busybox-static, dumb-init
// with its libc (and git, git-lfs for the helper), the images' /entrypoint, a gitlab-runner
// user. It returns the layout reference.
func buildGitLabBase(ctx context.Context, t *testing.T, kind gitlabbase.Kind, defect gitlabbase.Defect, dir string) string {
	t.Helper()
	var images []v1.Image
	for _, tg := range targets {
		debs, err := gitlabbase.Read(ctx, gitlabBaseCacheDir(), tg.DebArch)
		require.NoError(t, err)
		goarm := strings.TrimPrefix(tg.Variant, "v")
		pgrep, err := gitlabbase.BuildPgrep(ctx, t.TempDir(), tg.Arch, goarm, os.Environ())
		require.NoError(t, err)
		ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
		require.NoError(t, err)
		tarBytes, err := debs.Layer(kind, gitlabbase.Options{Pgrep: pgrep, CA: ca, Epoch: baseEpoch, Defect: defect})
		require.NoError(t, err)
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tarBytes)), nil },
			tarball.WithMediaType(types.OCILayer))
		require.NoError(t, err)
		cfg := v1.Config{Env: []string{imagePATH}, Entrypoint: []string{"/usr/bin/dumb-init", "/entrypoint"}, Cmd: []string{"sh"}}
		if kind == gitlabbase.Runner {
			cfg.Cmd = []string{"run", "--user=gitlab-runner", "--working-directory=/home/gitlab-runner"}
		}
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		img, err = mutate.ConfigFile(img, &v1.ConfigFile{Architecture: tg.Arch, OS: tg.OS, Variant: tg.Variant,
			Created: v1.Time{Time: baseEpoch}, Config: cfg, RootFS: v1.RootFS{Type: "layers"}})
		require.NoError(t, err)
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: baseEpoch}, CreatedBy: "helperbuild e2e: GitLab-like base " + tg.DebArch}})
		require.NoError(t, err)
		images = append(images, img)
	}
	require.NoError(t, writeIndexLayout(dir, baseTag, targets, images))
	return "oci:" + dir + ":" + baseTag
}

// writeIndexLayout writes images, one per target of ts in order, as one index tagged tag in
// the OCI layout dir. Entries carry media type, digest, size and platform only.
func writeIndexLayout(dir, tag string, ts []target, images []v1.Image) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	index := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	for i, img := range images {
		if err := p.WriteImage(img); err != nil {
			return err
		}
		desc, err := describe(img)
		if err != nil {
			return err
		}
		desc.Platform = &v1.Platform{OS: ts[i].OS, Architecture: ts[i].Arch, Variant: ts[i].Variant}
		index.Manifests = append(index.Manifests, desc)
	}
	raw, err := json.Marshal(index)
	if err != nil {
		return err
	}
	digest, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if err := p.WriteBlob(digest, io.NopCloser(bytes.NewReader(raw))); err != nil {
		return err
	}
	return p.AppendDescriptor(v1.Descriptor{MediaType: types.OCIImageIndex, Digest: digest, Size: size,
		Annotations: map[string]string{"org.opencontainers.image.ref.name": tag}})
}

// writeStartupConfig copies the example's recipe to dst with each image on its GitLab-like
// base and its contract: helper for gitlab-runner-helper, runner for gitlab-runner.
func writeStartupConfig(t *testing.T, src, dst, helperBase, runnerBase string) {
	t.Helper()
	raw, err := os.ReadFile(src)
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	images := mappingValue(doc.Content[0], "images")
	require.NotNil(t, images)
	for _, img := range images.Content {
		base, contract := helperBase, "helper"
		if mappingValue(img, "name").Value == "gitlab-runner" {
			base, contract = runnerBase, "runner"
		}
		mappingValue(mappingValue(img, "args"), "BASE_IMAGE").Value = base
		img.Content = append(img.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "contract"}, &yaml.Node{Kind: yaml.ScalarNode, Value: contract})
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	require.NoError(t, enc.Encode(&doc))
	require.NoError(t, os.WriteFile(dst, out.Bytes(), 0o644))
}

// startChecks counts the start checks of a verify --format json report: passed and failed
// ones, with the reasons of the failed.
func startChecks(t *testing.T, stdout string) (ok int, failed []string) {
	t.Helper()
	var doc struct {
		SchemaVersion int `json:"schemaVersion"`
		Images        []struct {
			Platforms []struct {
				Platform string `json:"platform"`
				Checks   []struct {
					Check  string `json:"check"`
					OK     bool   `json:"ok"`
					Reason string `json:"reason"`
					Step   string `json:"step"`
					User   string `json:"user"`
				} `json:"checks"`
			} `json:"platforms"`
		} `json:"images"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	require.Equal(t, 1, doc.SchemaVersion, stdout)
	for _, r := range doc.Images {
		for _, p := range r.Platforms {
			for _, c := range p.Checks {
				switch {
				case c.Check == "start" && c.OK:
					ok++
				case c.Check == "start":
					failed = append(failed, fmt.Sprintf("%s: [%s as %s] %s", p.Platform, c.Step, c.User, c.Reason))
				}
			}
		}
	}
	return ok, failed
}

// TestStartUpRuns builds the example on GitLab-like bases made of real Debian packages for
// all five platforms with build --run (each platform started as GitLab starts it before the
// layout is written), then verifies both images with --contract --run: amd64 natively, the
// others under qemu. A runner base with a seeded defect fails on every platform at its step,
// and build --run writes nothing for it.
func TestStartUpRuns(t *testing.T) {
	s := suiteFor(t)
	if _, err := gitlabbase.Read(context.Background(), gitlabBaseCacheDir(), "amd64"); err != nil {
		t.Fatalf("GitLab-like base: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("the runner's start-up run (uid 100) needs root")
	}
	ctx := context.Background()
	work := t.TempDir()
	dir := filepath.Join(work, "example")
	sh(t, "cp", "-a", s.exampleDir(t), dir)
	helperBase := buildGitLabBase(ctx, t, gitlabbase.Helper, "", filepath.Join(work, "helper-base"))
	runnerBase := buildGitLabBase(ctx, t, gitlabbase.Runner, "", filepath.Join(work, "runner-base"))
	writeStartupConfig(t, filepath.Join(dir, "helperbuild.yaml"), filepath.Join(dir, "startup.yaml"), helperBase, runnerBase)
	out := filepath.Join(work, "out")

	s.mustStep(t, "build --run on the GitLab-like bases", func(t *testing.T) {
		s.mustHelperbuild(t, dir, s.helperbuildEnv(t), "build", "--config", "startup.yaml", "--run", "--output", "oci:"+out)
	})
	for _, c := range []struct{ image, contract string }{{"gitlab-runner-helper", "helper"}, {"gitlab-runner", "runner"}} {
		s.step(t, "verify --contract "+c.contract+" --run", func(t *testing.T) {
			res := s.helperbuild(t, dir, s.helperbuildEnv(t), "verify", "--contract", c.contract, "--run", "--format", "json",
				"--platforms", platformList(targets), "oci:"+out+":"+c.image+":"+exampleVersion)
			assert.Zero(t, res.ExitCode, "verify:\n%s", res)
			ok, failed := startChecks(t, res.Stdout)
			assert.Empty(t, failed)
			assert.Equal(t, len(targets), ok, "every platform started:\n%s", res.Stdout)
		})
	}

	s.step(t, "a runner base whose /usr/bin/pgrep is busybox's fails at check-live everywhere", func(t *testing.T) {
		bad := buildGitLabBase(ctx, t, gitlabbase.Runner, gitlabbase.PgrepBusybox, filepath.Join(work, "runner-base-pgrep"))
		writeStartupConfig(t, filepath.Join(dir, "helperbuild.yaml"), filepath.Join(dir, "startup-bad.yaml"), helperBase, bad)
		badOut := filepath.Join(work, "out-bad")
		res := s.helperbuild(t, dir, s.helperbuildEnv(t), "build", "--config", "startup-bad.yaml", "--image", "gitlab-runner", "--run", "--output", "oci:"+badOut)
		assert.Equal(t, 1, res.ExitCode, "build --run:\n%s", res)
		assert.Contains(t, res.Stdout+res.Stderr, "pgrep: applet not found")
		assert.NoFileExists(t, filepath.Join(badOut, "index.json"), "nothing was written")

		res = s.mustHelperbuild(t, dir, s.helperbuildEnv(t), "build", "--config", "startup-bad.yaml", "--image", "gitlab-runner", "--output", "oci:"+badOut)
		res = s.helperbuild(t, dir, s.helperbuildEnv(t), "verify", "--contract", "runner", "--run", "--format", "json",
			"--platforms", platformList(targets), "oci:"+badOut+":gitlab-runner:"+exampleVersion)
		assert.Equal(t, 1, res.ExitCode, "verify:\n%s", res)
		ok, failed := startChecks(t, res.Stdout)
		assert.Zero(t, ok)
		require.Len(t, failed, len(targets), "%s", res.Stdout)
		for i, f := range failed {
			assert.Equal(t, targets[i].Platform+": [/configmaps/check-live as uid 100] runner start-up: /configmaps/check-live: "+
				"/usr/bin/pgrep -f .*register-the-runner found no process: pgrep: applet not found (uid 100, exited with status 1)", f)
		}
	})
}
