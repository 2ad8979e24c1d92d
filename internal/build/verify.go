package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/rootfs"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// verifyPlatform runs the per-platform checks on one platform's image
// (config against platform, every new ELF's architecture, the GitLab
// contract when the recipe names one, and with opts.Run the contract's
// start-up runs in a sandbox, asking --version of the binaries it built,
// built) as soon as it is assembled, while other platforms still compile,
// and before any of its blobs is uploaded.
// It returns the checks for the index report, or an error naming every
// failure.
//
// The checks are a pure function of the image's bytes (its manifest digest
// covers config and layers), the platform and the contract, so a pass is
// remembered in the cache and an unchanged image is not read again (nil
// checks: nothing to report).
func verifyPlatform(ctx context.Context, name, contract string, p v1.Platform, img v1.Image, built []string, opts Options) ([]verify.Check, error) {
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	run := opts.Run && contract != ""
	marker := verifiedMarker(opts.CacheDir, d, contract, p, run, built)
	if marker != "" {
		if _, err := os.Stat(marker); err == nil {
			opts.Logger.Info("platform verified", "image", name, "platform", platform.Format(p), "cached", true)
			return nil, nil
		}
	}
	dir, err := os.MkdirTemp(opts.TempDir, "verify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	checks, err := verify.Platform(ctx, img, p, verify.Options{Contract: contract, TempDir: dir, Run: run, Versions: built})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	rep := &verify.Report{Platforms: []verify.PlatformReport{{Platform: platform.Format(p), Digest: d.String(), Checks: checks}}}
	if !rep.OK() {
		return nil, failed(name, rep)
	}
	opts.Logger.Info("platform verified", "image", name, "platform", platform.Format(p), "cached", false)
	if marker != "" {
		if err := os.MkdirAll(filepath.Dir(marker), 0o755); err == nil {
			_ = os.WriteFile(marker, nil, 0o644) // only a hint: failing to write it costs a re-check
		}
	}
	return checks, nil
}

// verifyIndex checks a built image's index as a whole (every platform
// listed once, entries that are image manifests), taking each platform's
// own checks from checked (see verifyPlatform) instead of reading its
// layers again. Nothing is published unless this passes.
func verifyIndex(ctx context.Context, img product.Image, checked func(v1.Hash, v1.Platform) ([]verify.Check, bool), opts Options) error {
	want := make([]string, 0, len(img.Platforms))
	vo := verify.Options{Contract: img.Contract, TempDir: opts.TempDir, Jobs: opts.Jobs, Checked: checked}
	for _, p := range img.Platforms {
		vo.Platforms = append(vo.Platforms, p.Platform)
		want = append(want, platform.Format(p.Platform))
	}
	rep, err := verify.Index(ctx, img.Index, vo)
	if err != nil {
		return fmt.Errorf("verify %s: %w", img.Name, err)
	}
	if !rep.OK() {
		return failed(img.Name, rep)
	}
	opts.Logger.Info("verified", "image", img.Name, "platforms", strings.Join(want, ","), "contract", img.Contract)
	return nil
}

// failed is the error for a report with failures: one line that counts
// them, wrapping the report (a *verify.FailedError) for the command to
// print as verify's table.
func failed(name string, rep *verify.Report) error {
	return &verify.FailedError{Name: "image " + name, Report: rep, Outcome: "nothing was published"}
}

// verifiedMarker names the cache file that records a passed verification
// of the image with digest d for p and contract, the built binaries asked
// --version; "" without a cache.
func verifiedMarker(cacheDir string, d v1.Hash, contract string, p v1.Platform, run bool, built []string) string {
	if cacheDir == "" {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "helperbuild-verify-v3\x00%s\x00%s\x00%s\x00%t\x00%s", d, contract, platform.Format(p), run, strings.Join(built, "\x00"))
	return filepath.Join(cacheDir, "verified", hex.EncodeToString(h.Sum(nil)))
}

// builtPaths are the image paths of the files entries copies from binDir:
// the binaries this run compiled into the image.
func builtPaths(entries []rootfs.Entry, binDir string) []string {
	var out []string
	dir := filepath.Clean(binDir) + string(filepath.Separator)
	for _, e := range entries {
		if e.Kind == rootfs.File && strings.HasPrefix(filepath.Clean(e.Source), dir) {
			out = append(out, e.Path)
		}
	}
	return out
}
