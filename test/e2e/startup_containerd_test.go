//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/gitlabbase"
)

// TestStartUpAgreesWithContainerd starts runner images made on GitLab-like bases (complete,
// and with defects that a node trips over or does not) the way the Helm chart's pod runs
// them, but under containerd (runc) instead of helperbuild's sandbox: config User 100:65533,
// the chart-like scripts bind-mounted read-only at /configmaps, a runner-token in /secrets,
// a directory owned 0:65533 mode 2775 where the chart has its emptyDir, and the chart's
// command. verify --contract runner --run must reach the same verdict on every image, in
// both directions. amd64 runs natively, arm64 under the suite's binfmt_misc qemu.
func TestStartUpAgreesWithContainerd(t *testing.T) {
	s := suiteFor(t)
	if _, err := gitlabbase.Read(context.Background(), gitlabBaseCacheDir(), "amd64"); err != nil {
		t.Fatalf("GitLab-like base: %v", err)
	}
	ctx := context.Background()
	work := t.TempDir()
	scripts := filepath.Join(s.repoRoot, "internal", "verify", "startscripts")
	defects := []gitlabbase.Defect{"", gitlabbase.NoSeqBusyboxSh, gitlabbase.HomeNotWritable, gitlabbase.NoSeqBashSh,
		gitlabbase.PgrepBusybox, gitlabbase.NoPgrep, gitlabbase.CRLFEntrypoint, gitlabbase.EntrypointNotExec,
		gitlabbase.EntrypointDropsArgs, gitlabbase.BashNotBash, gitlabbase.DumbInitNoLoader,
		gitlabbase.ConfigDirUncovered, gitlabbase.HomeElsewhere}
	for _, tg := range targets[:2] { // linux/amd64 natively, linux/arm64 under qemu
		debs, err := gitlabbase.Read(ctx, gitlabBaseCacheDir(), tg.DebArch)
		require.NoError(t, err)
		pgrep, err := gitlabbase.BuildPgrep(ctx, work, tg.Arch, "", os.Environ())
		require.NoError(t, err)
		runner := filepath.Join(work, "gitlab-runner-"+tg.Arch)
		build := command(t, append(os.Environ(), "GOOS=linux", "GOARCH="+tg.Arch, "CGO_ENABLED=0"), "go", "build", "-o", runner, ".")
		build.Dir = filepath.Join(s.repoRoot, "examples", "gitlab-runner")
		mustRun(t, build)
		runnerBin, err := os.ReadFile(runner)
		require.NoError(t, err)
		for _, d := range defects {
			name := string(d)
			if name == "" {
				name = "complete"
			}
			s.step(t, tg.slug()+" "+name, func(t *testing.T) {
				dir := filepath.Join(work, tg.slug()+"-"+strings.NewReplacer("/", "", " ", "-", ",", "").Replace(name))
				layout := runnerImageLayout(t, debs, tg, d, pgrep, runnerBin, dir)
				res := s.helperbuild(t, work, s.helperbuildEnv(t), "verify", "--contract", "runner", "--run", "--format", "json",
					"--platforms", tg.Platform, "oci:"+layout+":"+baseTag)
				ok, failed := startChecks(t, res.Stdout)
				verifyStarts := ok == 1 && len(failed) == 0
				ctrStarts, ctrOut := s.chartLikeRun(t, tg, layout, scripts, dir)
				assert.Equal(t, ctrStarts, verifyStarts, "containerd started it: %v\n%s\nverify: %v", ctrStarts, ctrOut, failed)
				t.Logf("%s %s: containerd %v, verify %v %v", tg.Platform, name, ctrStarts, verifyStarts, failed)
			})
		}
	}
}

// runnerImageLayout writes a one-platform runner image (the GitLab-like base with defect,
// the example's gitlab-runner) with config User 100:65533 to an OCI layout under dir.
func runnerImageLayout(t *testing.T, debs *gitlabbase.Debs, tg target, d gitlabbase.Defect, pgrep, runner []byte, dir string) string {
	t.Helper()
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	require.NoError(t, err)
	base, err := debs.Layer(gitlabbase.Runner, gitlabbase.Options{Pgrep: pgrep, CA: ca, Epoch: baseEpoch, Defect: d})
	require.NoError(t, err)
	var own bytes.Buffer
	tw := tar.NewWriter(&own)
	for _, h := range []*tar.Header{
		{Name: "usr/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: baseEpoch},
		{Name: "usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: baseEpoch},
		{Name: "usr/bin/gitlab-runner", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(runner)), ModTime: baseEpoch},
	} {
		require.NoError(t, tw.WriteHeader(h))
	}
	_, err = tw.Write(runner)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{Architecture: tg.Arch, OS: tg.OS, Created: v1.Time{Time: baseEpoch},
		Config: v1.Config{Env: []string{imagePATH}, User: "100:65533"}, RootFS: v1.RootFS{Type: "layers"}})
	require.NoError(t, err)
	for i, b := range [][]byte{base, own.Bytes()} {
		raw := b
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
			tarball.WithMediaType(types.OCILayer))
		require.NoError(t, err)
		h := v1.History{Created: v1.Time{Time: baseEpoch}, CreatedBy: "base"}
		if i == 1 {
			h = v1.History{Created: v1.Time{Time: baseEpoch}, CreatedBy: "COPY gitlab-runner", Comment: "buildkit.dockerfile.v0"}
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer, History: h})
		require.NoError(t, err)
	}
	layout := filepath.Join(dir, "oci")
	require.NoError(t, writeIndexLayout(layout, baseTag, []target{tg}, []v1.Image{img}))
	return layout
}

// chartLikeRun imports the layout into containerd and runs the chart's command in it as
// the image's user (100:65533), with the chart-like scripts and mounts; it reports whether
// the start-up got to gitlab-runner (exit 0 after its last step printed gitlab-runner's
// Version: line), and its output.
func (s *Suite) chartLikeRun(t *testing.T, tg target, layout, scripts, dir string) (bool, string) {
	t.Helper()
	cm := filepath.Join(dir, "configmaps")
	secrets := filepath.Join(dir, "secrets")
	empty := filepath.Join(dir, "emptydir")
	for _, d := range []string{cm, secrets, empty} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, f := range []string{"entrypoint", "register-the-runner", "check-live"} {
		sh(t, "cp", filepath.Join(scripts, f), filepath.Join(cm, f))
	}
	require.NoError(t, os.WriteFile(filepath.Join(cm, "config.toml"), []byte("concurrent = 1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "runner-token"), []byte("glrt-e2e"), 0o644))
	require.NoError(t, os.Chown(empty, 0, 65533))
	require.NoError(t, os.Chmod(empty, 0o775|os.ModeSetgid))
	archive := filepath.Join(dir, "image.tar")
	sh(t, "tar", "-C", layout, "-cf", archive, ".")
	ns := "startup-" + randomHex(4)
	name := "e2e.local/startup:" + baseTag
	mustRun(t, s.containerd.ctr(t, ns, "images", "import", "--platform", tg.Platform, "--base-name", "e2e.local/startup", archive))
	id := "startup-" + tg.slug() + "-" + randomHex(4)
	res := run(t, s.containerd.ctr(t, ns, "run", "--rm", "--platform", tg.Platform,
		"--mount", "type=bind,src="+cm+",dst=/configmaps,options=rbind:ro",
		"--mount", "type=bind,src="+secrets+",dst=/secrets,options=rbind:ro",
		"--mount", "type=bind,src="+empty+",dst=/home/gitlab-runner/.gitlab-runner,options=rbind:rw",
		name, id, "/usr/bin/dumb-init", "--", "/bin/bash", "/configmaps/entrypoint"))
	// A pod whose command ends without having run gitlab-runner restarts, and crash-loops:
	// started means it got to the last step and gitlab-runner printed its version there.
	_, last, _ := strings.Cut(res.Stdout, "@@step exec /entrypoint run")
	return res.ExitCode == 0 && strings.Contains(last, "Version:"), res.String()
}
