package verify

import (
	"archive/tar"
	"context"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/pecheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// verifyWindowsImage runs the checks that apply to a Windows image: its
// os.version (on the config and on the index entry, one build), the PE
// executables its own layers add (machine, console subsystem, Go build
// settings), with the base's foreign layers never read. With
// opts.Attestations, statements are checked as a Linux image's are (subject,
// the SBOM's Go modules of each .exe the own layers add, the provenance's
// base digest). The contract and the runs are Linux-only and say so.
func verifyWindowsImage(ctx context.Context, img v1.Image, cfg *v1.ConfigFile, desc *v1.Platform, opts Options, statements []statementBlob) ([]Check, error) {
	p := configPlatform(cfg)
	var checks []Check
	if desc != nil {
		checks = append(checks, windowsConfigCheck(cfg, *desc))
		p.Architecture, p.Variant = desc.Architecture, desc.Variant
	} else if cfg.OSVersion == "" {
		checks = append(checks, Check{Name: CheckConfig, Reason: "the Windows config has no os.version: no Windows node can tell whether it runs the image"})
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	own, _ := ownLayers(cfg, len(layers))
	arch := findings{name: CheckArch}
	var exes, foreign int
	var bins []elfFile // the own layers' Go executables, as the SBOM names them
	budget := newReadBudget(opts)
	for i, l := range budget.bound(layers) {
		mt, err := l.MediaType()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if !mt.IsDistributable() {
			foreign++
			continue
		}
		if !own[i] {
			continue
		}
		err = rootfs.EachEntry(ctx, l, func(_ int, hdr *tar.Header, r io.Reader) error {
			if err := budget.entry(); err != nil {
				return err
			}
			if !isRegular(hdr) || !strings.HasSuffix(strings.ToLower(hdr.Name), ".exe") {
				return nil
			}
			exes++
			bin, err := checkPE(r, opts.TempDir, windowsPath(hdr.Name), p, &arch)
			if bin != nil {
				bin.path = sbomPath(hdr.Name)
				bins = append(bins, *bin)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	if exes == 0 {
		arch.fail("the image's own layers hold no .exe: nothing a Windows node could run was added")
	}
	summary := fmt.Sprintf("%d Windows executable(s) are %s console programs", exes, platform.Format(v1.Platform{OS: "windows", Architecture: p.Architecture, Variant: p.Variant}))
	if foreign > 0 {
		summary += fmt.Sprintf(" (%d foreign base layer(s) referenced by URL, not read)", foreign)
	}
	checks = append(checks, arch.done(summary)...)
	if opts.Contract != ContractNone {
		checks = append(checks, Check{Name: CheckContract, OK: true, Warning: true, Reason: "Windows entry: the helper contract describes Linux images and is not checked here"})
	}
	if opts.Run {
		checks = append(checks, Check{Name: CheckRun, OK: true, Warning: true, Reason: "Windows entries are not started here (no Windows host); their PE binaries were checked"})
	}
	if opts.Attestations {
		ac, err := attestationChecks(ctx, img, statements, bins, nil, desc == nil, opts)
		if err != nil {
			return nil, err
		}
		checks = append(checks, ac...)
	}
	return checks, nil
}

// windowsConfigCheck compares a Windows config with its index entry: the
// same os/architecture, an os.version on both, and the same build.
func windowsConfigCheck(cfg *v1.ConfigFile, desc v1.Platform) Check {
	got := configPlatform(cfg)
	switch {
	case desc.OSVersion == "":
		return Check{Name: CheckConfig, Reason: "the index lists " + platform.Format(desc) + " without os.version: a Windows node cannot tell which build it is (config says " + platform.Format(got) + ")"}
	case cfg.OSVersion == "":
		return Check{Name: CheckConfig, Reason: "the config has no os.version but the index lists it as " + platform.Format(desc)}
	case got.OS != desc.OS || got.Architecture != desc.Architecture || got.Variant != desc.Variant || !platform.Satisfies(got, v1.Platform{OS: desc.OS, Architecture: desc.Architecture, Variant: desc.Variant, OSVersion: buildOf(desc.OSVersion)}):
		return Check{Name: CheckConfig, Reason: "config says " + platform.Format(got) + " but the index lists it as " + platform.Format(desc)}
	}
	return Check{Name: CheckConfig, OK: true, Reason: "config says " + platform.Format(got)}
}

// buildOf is major.minor.build of a Windows version, or v as given.
func buildOf(v string) string {
	if b, ok := platform.OSBuild(v); ok {
		return b
	}
	return v
}

// windowsPath turns a Windows layer path (Files/app/x.exe) into the path
// the container sees (C:\app\x.exe).
func windowsPath(name string) string {
	rest := strings.TrimPrefix(strings.TrimPrefix(name, "./"), "Files/")
	return `C:\` + strings.ReplaceAll(rest, "/", `\`)
}

// sbomPath is where an SBOM names the file of a Windows layer path
// (Files/app/x.exe is /app/x.exe, as helperbuild's attestations write it).
func sbomPath(name string) string {
	return "/" + strings.TrimPrefix(strings.TrimPrefix(name, "./"), "Files/")
}

// checkPE spools r and records in f whether it is a PE console program for
// p built by Go for p. A Go executable is returned with its modules (for
// the SBOM check), its path left to the caller; nil for any other file.
func checkPE(r io.Reader, dir, path string, p v1.Platform, f *findings) (*elfFile, error) {
	tmp, err := os.CreateTemp(dir, "pe-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, r); err != nil {
		return nil, err
	}
	if err := pecheck.Check(tmp, p); err != nil {
		f.failAt(path, err.Error())
		return nil, nil
	}
	info, ok, err := pecheck.GoInfo(tmp)
	switch {
	case err != nil:
		f.failAt(path, err.Error())
	case ok:
		if err := pecheck.CheckGo(info, p); err != nil {
			f.failAt(path, err.Error())
		}
		if bi, err := buildinfo.Read(tmp); err == nil {
			return &elfFile{goBinary: true, mainPkg: bi.Path, modules: goModules(bi)}, nil
		}
	}
	return nil, nil
}
