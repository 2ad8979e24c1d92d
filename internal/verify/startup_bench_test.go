package verify

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/gitlabbase"
	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// BenchmarkStartUp measures both start-up runs of one platform of a complete
// GitLab-like image (unpack, the --version runs and the starts; the image is
// built outside the timer): natively for amd64, under qemu for arm64.
//
//	go test ./internal/verify/ -run '^$' -bench StartUp -benchtime 3x
func BenchmarkStartUp(b *testing.B) {
	if !sandbox.CanRunAs() || runtime.GOARCH != "amd64" {
		b.Skip("the start-up runs need root on an amd64 host")
	}
	for _, a := range []struct {
		p      v1.Platform
		goarch string
	}{{amd64, "amd64"}, {arm64, "arm64"}} {
		debs := gitlabBaseDebs(b, a.goarch)
		pgrep, err := gitlabbase.BuildPgrep(context.Background(), b.TempDir(), a.goarch, "", os.Environ())
		require.NoError(b, err)
		for _, k := range []struct {
			name     string
			kind     gitlabbase.Kind
			contract string
			bin      string
			cfg      v1.Config
		}{
			{"runner", gitlabbase.Runner, ContractRunner, "usr/bin/gitlab-runner", v1.Config{Env: []string{imagePath}}},
			{"helper", gitlabbase.Helper, ContractHelper, "usr/bin/gitlab-runner-helper",
				v1.Config{Env: []string{imagePath}, Entrypoint: []string{"/usr/bin/dumb-init", "/entrypoint"}, Cmd: []string{"sh"}}},
		} {
			layer, err := debs.Layer(k.kind, gitlabbase.Options{Pgrep: pgrep, CA: []byte("ca\n"), Epoch: time.Unix(0, 0)})
			require.NoError(b, err)
			idx := testIndex(b, listed{a.p, testImage(b, a.p, k.cfg, lay{raw: layer}, own(tartest.File(k.bin, 0o755, bins[a.goarch])))})
			b.Run(k.name+"/"+a.goarch, func(b *testing.B) {
				for b.Loop() {
					r, err := Index(context.Background(), idx, Options{Run: true, Contract: k.contract, TempDir: b.TempDir()})
					require.NoError(b, err)
					require.True(b, r.OK(), "%v", r.Findings())
				}
			})
		}
	}
}
