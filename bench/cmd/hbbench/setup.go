package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// bench holds one benchmark run's state.
type bench struct {
	cfg   *config
	work  string
	start time.Time
	seq   int
	log   *os.File

	helperbuild string
	hbErr       error
	ko          string
	koErr       error

	proxy *countingProxy
	reg   *registry // the docker-registry behind proxy (for its CPU time)
	host  string    // localhost:PORT of the proxy
	base  string    // base image reference: a tiny one (example, bigmain)
	// busybox is a busybox-like base with an apk database (mid).
	busybox string

	facts struct {
		goVersion, hbVersion, koVersion, load, loadEnd string
		cpus                                           int
	}
	rows     []row
	summary  []summaryRow
	sections []section
}

func (b *bench) progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hbbench %6.1fs: %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

// runID is a value for -X that no earlier run used, so the link step reruns.
func (b *bench) runID() string {
	b.seq++
	return fmt.Sprintf("%d.%d", b.start.Unix(), b.seq)
}

// output runs a short command and returns its stdout ("" on error).
func (b *bench) output(ctx context.Context, dir string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stderr = b.log
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// buildHelperbuild builds ./cmd/helperbuild of the checkout into the work
// directory, the way `make build` does.
func (b *bench) buildHelperbuild(ctx context.Context) (string, error) {
	bin := filepath.Join(b.work, "bin", "helperbuild")
	b.progress("building helperbuild from %s", b.cfg.repo)
	_, err := run(ctx, proc{
		Dir:     b.cfg.repo,
		Env:     append(os.Environ(), "CGO_ENABLED=0"),
		Args:    []string{"go", "build", "-trimpath", "-o", bin, "./cmd/helperbuild"},
		Log:     b.log,
		Timeout: b.cfg.warmTimeout,
	})
	if err != nil {
		b.progress("helperbuild does not build; its rows are left out: %v", err)
		return "", fmt.Errorf("helperbuild did not build (see bench.log)")
	}
	return bin, nil
}

// installKo installs ko from the Go module proxy into a GOBIN inside the
// work directory; ko never becomes a dependency of any module.
func (b *bench) installKo(ctx context.Context) (string, error) {
	if b.cfg.koVersion == "" || b.cfg.koVersion == "none" {
		return "", fmt.Errorf("%w (-ko none)", errSkipped)
	}
	gobin := filepath.Join(b.work, "kobin")
	b.progress("installing ko %s into %s (go install; compiles ko the first time, minutes)", b.cfg.koVersion, gobin)
	_, err := run(ctx, proc{
		Dir:     b.work, // outside any module
		Env:     append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-buildvcs=false"),
		Args:    []string{"go", "install", "github.com/google/ko@" + b.cfg.koVersion},
		Log:     b.log,
		Timeout: b.cfg.warmTimeout,
	})
	if err != nil {
		b.progress("ko could not be installed; its rows say so: %v", err)
		return "", fmt.Errorf("ko %s could not be installed here (go install failed, see bench.log)", b.cfg.koVersion)
	}
	return filepath.Join(gobin, "ko"), nil
}

func (b *bench) pushBase(ctx context.Context) error {
	var ps []v1.Platform
	for _, s := range b.cfg.platforms {
		parts := strings.Split(s, "/")
		p := v1.Platform{OS: parts[0], Architecture: parts[1]}
		if len(parts) > 2 {
			p.Variant = parts[2]
		}
		ps = append(ps, p)
	}
	for _, base := range []struct {
		ref     string
		layerOf func(v1.Platform, time.Time) (v1.Layer, error)
	}{{b.base, tinyLayer}, {b.busybox, busyboxLayer}} {
		d, err := pushBase(ctx, base.ref, ps, base.layerOf)
		if err != nil {
			return err
		}
		fmt.Fprintf(b.log, "base %s@%s\n", base.ref, d)
	}
	return nil
}

// baseOf is the base image of w's images.
func (b *bench) baseOf(w *workload) string {
	if w.Busybox {
		return b.busybox
	}
	return b.base
}

// workload is one Go main package to build into images.
type workload struct {
	Key   string // example, bigmain, huge
	Title string
	Dir   string // module root
	Pkg   string // main package, relative to Dir
	Bin   string // binary name in the image
	XVar  string // a variable for -X, so each run can link a new binary
	// Busybox: on the busybox-like base with an OS package database,
	// else on the tiny base.
	Busybox bool
	Size    int64 // linux/amd64 binary size, once the floor has built it
	// IdleFloor is the idle push ÷ floor target; 0: idlePushFloor.
	IdleFloor float64
}

func (b *bench) workload(name string) (*workload, error) {
	switch name {
	case "example":
		return &workload{Key: "example", Title: "examples/gitlab-runner helper",
			Dir: filepath.Join(b.cfg.repo, "examples", "gitlab-runner"), Pkg: "./apps/gitlab-runner-helper", Bin: "gitlab-runner-helper",
			XVar: "example.com/gitlab-runner/common.REVISION"}, nil
	case "bigmain":
		return &workload{Key: "bigmain", Title: "bench/bigmain",
			Dir: filepath.Join(b.cfg.repo, "bench", "bigmain"), Pkg: ".", Bin: "bigmain", XVar: "main.benchRun"}, nil
	case "mid":
		return &workload{Key: "mid", Title: "bench/bigmain/mid on a busybox base",
			Dir: filepath.Join(b.cfg.repo, "bench", "bigmain"), Pkg: "./mid", Bin: "mid", XVar: "main.benchRun", Busybox: true,
			IdleFloor: idlePushFloorMid}, nil
	case "held":
		// Issue 41's outside measurement: a medium program (about 10 MB)
		// for five platforms on a busybox base, not the bench's own mid.
		return &workload{Key: "held", Title: "bench/bigmain/held on a busybox base (held-out-like)",
			Dir: filepath.Join(b.cfg.repo, "bench", "bigmain"), Pkg: "./held", Bin: "held", XVar: "main.benchRun", Busybox: true,
			IdleFloor: idlePushFloorMid}, nil
	case "huge":
		if err := writeBlob(filepath.Join(b.cfg.repo, "bench", "bigmain", "huge", "blob.bin"), b.cfg.hugeMB<<20); err != nil {
			return nil, err
		}
		return &workload{Key: "huge", Title: "bench/bigmain/huge",
			Dir: filepath.Join(b.cfg.repo, "bench", "bigmain"), Pkg: "./huge", Bin: "huge", XVar: "main.benchRun"}, nil
	}
	return nil, fmt.Errorf("unknown workload %q (want example, mid, held, bigmain)", name)
}

// writeBlob writes n incompressible bytes from a fixed seed to path, unless
// the file already holds exactly them (so go's cache stays warm).
func writeBlob(path string, n int) error {
	data := make([]byte, n)
	r := rand.NewChaCha8([32]byte{'h', 'e', 'l', 'p', 'e', 'r', 'b', 'u', 'i', 'l', 'd'})
	_, _ = r.Read(data)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}
