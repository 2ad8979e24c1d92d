package release

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// verifyImage runs the checks that need no emulator on a built image:
// coverage, config against descriptor, every new ELF's architecture, and
// the GitLab contract when the recipe names one. Nothing is published
// unless this passes.
func verifyImage(ctx context.Context, img Image, opts Options) error {
	var want = make([]string, 0, len(img.Platforms))
	vo := verify.Options{Contract: img.Contract, TempDir: opts.TempDir, Jobs: opts.Jobs}
	for _, p := range img.Platforms {
		vo.Platforms = append(vo.Platforms, p.Platform)
		want = append(want, platform.Format(p.Platform))
	}
	dir, err := os.MkdirTemp(opts.TempDir, "verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	vo.TempDir = dir
	rep, err := verify.Index(ctx, img.Index, vo)
	if err != nil {
		return fmt.Errorf("verify %s: %w", img.Name, err)
	}
	if rep.OK() {
		opts.Logger.Info("verified", "image", img.Name, "platforms", strings.Join(want, ","), "contract", img.Contract)
		return nil
	}
	var problems []string
	for _, f := range rep.Findings() {
		if !strings.Contains(f, ": warning: ") {
			problems = append(problems, f)
		}
	}
	return fmt.Errorf("image %s failed verification, nothing was published: %s", img.Name, strings.Join(problems, "; "))
}
