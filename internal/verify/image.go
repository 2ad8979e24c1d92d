package verify

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// verifyImage runs the per-platform checks on one image. desc is the platform
// the index lists it under, nil for a single image (no config comparison). n
// numbers the platform for its rootfs directory under TempDir.
// With opts.Attestations, statements are what attests the image.
func verifyImage(ctx context.Context, img v1.Image, desc *v1.Platform, n int, opts Options, statements []statementBlob) ([]Check, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if cfg.OS == "windows" || (desc != nil && desc.OS == "windows") {
		return verifyWindowsImage(ctx, img, cfg, desc, opts, statements)
	}
	p := configPlatform(cfg)
	var checks []Check
	if desc != nil {
		checks = append(checks, configCheck(p, *desc))
		p = *desc
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	own, matched := ownLayers(cfg, len(layers))

	var t *rootfs.FS
	if opts.Contract != ContractNone || opts.AllFiles || opts.Run || opts.Attestations {
		t = rootfs.New()
	}
	arch := &archCheck{platform: p, f: findings{name: CheckArch}, modules: opts.Attestations}
	var base baseBinaries // with Attestations: the SBOM must list them
	scanELF := own
	switch {
	case opts.AllFiles: // checkAllFiles reads the flattened tree's
		scanELF = make([]bool, len(layers))
	case opts.Attestations: // the base's too, for their Go binaries
		scanELF = slices.Repeat([]bool{true}, len(layers))
	}
	err = scan(ctx, layers, newReadBudget(opts), t, scanELF, opts.TempDir, func(path string, src rootfs.Source, _ *tar.Header, f *os.File) error {
		if own[src.Layer] {
			arch.check(path, src, f)
		} else {
			base.check(path, src, f)
		}
		return nil
	})
	var big *layersTooBigError
	if errors.As(err, &big) {
		return append(checks, Check{Name: CheckArch, Reason: big.Error() + ": the image's files were not checked"}), nil
	}
	if err != nil {
		return nil, err
	}
	if opts.AllFiles {
		if err := checkAllFiles(ctx, layers, t, arch, opts.TempDir); err != nil {
			return nil, err
		}
	}
	checks = append(checks, arch.f.done(arch.summary(archScope(opts.AllFiles, matched, own)))...)
	if !matched && !opts.AllFiles {
		checks = append(checks, Check{Name: CheckArch, OK: true, Warning: true,
			Reason: "the history does not say which layers are the image's own (no " + ownComment + " entries matching the layers); checked all of them"})
	}

	if checks, err = contractAndRun(ctx, checks, t, cfg, layers, p, arch.files, own, n, opts); err != nil {
		return nil, err
	}
	if opts.Attestations {
		ac, err := attestationChecks(ctx, img, statements, arch.files, base.present(t), desc == nil, opts)
		if err != nil {
			return nil, err
		}
		checks = append(checks, ac...)
	}
	return checks, nil
}

// contractAndRun appends to checks the contract check (with
// opts.Contract) and the sandboxed runs of programs (with opts.Run), a run
// winning over the contract's static findings it covers: the programs run
// are the Go programs among files the own layers added. n numbers the
// platform for its directory under TempDir.
func contractAndRun(ctx context.Context, checks []Check, t *rootfs.FS, cfg *v1.ConfigFile, layers []v1.Layer, p v1.Platform, files []elfFile, own []bool, n int, opts Options) ([]Check, error) {
	var s spec
	if opts.Contract != ContractNone {
		s = helperSpec()
		if opts.Contract == ContractRunner {
			s = runnerSpec()
		}
		cc, err := checkContract(ctx, s, t, cfg, layers, opts.TempDir)
		if err != nil {
			return nil, fmt.Errorf("contract: %w", err)
		}
		checks = append(checks, cc...)
	}
	if opts.Run {
		ask, listed := versionPrograms(ownGoPrograms(t, files, own), opts.Versions)
		rc, err := runPrograms(ctx, layers, t, cfg, p, ask, listed, filepath.Join(opts.TempDir, strconv.Itoa(n)), opts)
		if err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
		checks = append(checks, rc...)
		checks = runWins(checks, s.startCovers)
	}
	return checks, nil
}

// attestationChecks checks the statements about img against what its
// files are (the image's own binaries, the base's) and against the source.
func attestationChecks(ctx context.Context, img v1.Image, statements []statementBlob, files, base []elfFile, single bool, opts Options) ([]Check, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	checks := attestCheck(d, m.Annotations, statements, files, base, single)
	return append(checks, truthCheck(ctx, m.Annotations, statements, opts.SourceFile)...), nil
}

func archScope(all, matched bool, own []bool) string {
	switch {
	case all:
		return "the flattened filesystem"
	case matched:
		var idx []string
		for i, o := range own {
			if o {
				idx = append(idx, strconv.Itoa(i+1))
			}
		}
		return fmt.Sprintf("the image's own layers (%s of %d)", strings.Join(idx, ","), len(own))
	default:
		return fmt.Sprintf("all %d layers", len(own))
	}
}

// checkAllFiles checks every executable regular file of the flattened tree
// that is an ELF file; hardlinked names are checked once, under the first.
func checkAllFiles(ctx context.Context, layers []v1.Layer, t *rootfs.FS, arch *archCheck, tmpDir string) error {
	names := map[rootfs.Source]string{}
	want := map[rootfs.Source]bool{}
	_ = t.Walk(func(p string, n rootfs.Info) error {
		if n.IsRegular() && n.Mode&0o111 != 0 && !want[n.Source] {
			want[n.Source], names[n.Source] = true, p
		}
		return nil
	})
	return rootfs.ReadSources(ctx, layers, want, func(src rootfs.Source, r io.Reader) error {
		return elfcheck.SpoolELF(r, tmpDir, func(f *os.File) error {
			arch.check(names[src], src, f)
			return nil
		})
	})
}

// contractPrograms are the programs the GitLab image contracts name
// (gitlab-image-contract.md) that answer --version with an OS/Arch line.
var contractPrograms = []string{"gitlab-runner-helper", "gitlab-runner"}

// versionPrograms splits the image's own Go programs into those Run asks
// --version (named as the contract names GitLab Runner's binaries, or built
// by the caller: built) and the others, which are only listed: a Go program
// need not have a --version (a Go-written pgrep takes it for a pattern,
// kubectl has a version subcommand), and the start-up runs decide whether
// the image works as GitLab starts it.
func versionPrograms(progs, built []string) (ask, listed []string) {
	for _, p := range progs {
		if slices.Contains(contractPrograms, path.Base(p)) || slices.Contains(built, p) {
			ask = append(ask, p)
		} else {
			listed = append(listed, p)
		}
	}
	return ask, listed
}

// ownGoPrograms are the Go programs of own layers still present, unchanged,
// in the flattened tree: the binaries whose build info names a main package.
// A base's busybox or coreutils is never among them (busybox takes
// "--version" for an applet name and fails), also when the history cannot
// say which layers are own.
func ownGoPrograms(t *rootfs.FS, files []elfFile, own []bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		if !f.runnable || f.mainPkg == "" || !own[f.src.Layer] || seen[f.path] {
			continue
		}
		if n, ok := t.Lookup(f.path); ok && n.IsRegular() && n.Source == f.src {
			seen[f.path] = true
			out = append(out, f.path)
		}
	}
	return out
}

func configPlatform(cfg *v1.ConfigFile) v1.Platform {
	p := v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}
	if cfg.OS == "windows" {
		p.OSVersion = cfg.OSVersion
	}
	return p
}

// samePlatform is platform.Equal, except that arm without a variant differs
// from arm with one: clients treat a missing variant as "any arm"; and two
// Windows platforms are the same when one's OS version names the other's
// build (10.0.20348 and 10.0.20348.2340).
func samePlatform(a, b v1.Platform) bool {
	if a.Architecture == "arm" && b.Architecture == "arm" && (a.Variant == "") != (b.Variant == "") {
		return false
	}
	if platform.IsWindows(a) && platform.IsWindows(b) && a.OSVersion != "" && b.OSVersion != "" {
		return platform.Satisfies(a, b) || platform.Satisfies(b, a)
	}
	return platform.Equal(a, b)
}

// configCheck compares the image config's platform with the index entry's.
func configCheck(cfg, desc v1.Platform) Check {
	switch {
	case cfg.OS == "" || cfg.Architecture == "":
		return Check{Name: CheckConfig, Reason: "config has no os/architecture but the index lists it as " + platform.Format(desc)}
	case !samePlatform(cfg, desc):
		return Check{Name: CheckConfig, Reason: "config says " + platform.Format(cfg) + " but the index lists it as " + platform.Format(desc)}
	}
	return Check{Name: CheckConfig, OK: true, Reason: "config says " + platform.Format(cfg)}
}

// ConfigAgrees is the check that the config cf names the platform desc of
// its index entry (merge holds each part's manifests to it).
func ConfigAgrees(cf *v1.ConfigFile, desc v1.Platform) Check {
	return configCheck(configPlatform(cf), desc)
}

// runWins turns the contract's failures about what a start-up run
// exercised (covers: paths and command names) into hints, once a start-up
// ran: where starting the image and a file check disagree, the start
// decides; where both fail, the file check says why.
func runWins(checks []Check, covers []string) []Check {
	started := slices.ContainsFunc(checks, func(c Check) bool { return c.Name == CheckStart })
	if !started {
		return checks
	}
	out := make([]Check, 0, len(checks))
	for _, c := range checks {
		if c.Name == CheckContract && !c.OK && c.Path != "" && slices.Contains(covers, c.Path) {
			c.OK, c.Warning, c.Reason = true, true, "hint (the start-up run decides): "+c.Reason
		}
		out = append(out, c)
	}
	return out
}
