package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
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
	// The checks are a pure function of the index's bytes (its digest
	// covers every manifest, config and layer) and of what is expected, so
	// a pass is remembered in the cache and an unchanged release is not
	// read again.
	marker := verifiedMarker(opts.CacheDir, img, vo)
	if marker != "" {
		if _, err := os.Stat(marker); err == nil {
			opts.Logger.Info("verified", "image", img.Name, "platforms", strings.Join(want, ","), "contract", img.Contract, "cached", true)
			return nil
		}
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
		if marker != "" {
			if err := os.MkdirAll(filepath.Dir(marker), 0o755); err == nil {
				_ = os.WriteFile(marker, nil, 0o644) // only a hint: failing to write it costs a re-check
			}
		}
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

// verifiedMarker names the cache file that records a passed verification
// of img with vo; "" without a cache.
func verifiedMarker(cacheDir string, img Image, vo verify.Options) string {
	if cacheDir == "" {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "helperbuild-verify-v1\x00%s\x00%s", img.Digest, vo.Contract)
	for _, p := range vo.Platforms {
		fmt.Fprintf(h, "\x00%s", platform.Format(p))
	}
	return filepath.Join(cacheDir, "verified", hex.EncodeToString(h.Sum(nil)))
}
