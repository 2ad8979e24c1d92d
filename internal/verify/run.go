package verify

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// maxOutput bounds how much of a program's output is kept.
const maxOutput = 64 << 10

// qemuArch maps GOARCH to qemu-user's name for it.
var qemuArch = map[string]string{
	"amd64": "x86_64", "arm64": "aarch64", "arm": "arm", "ppc64le": "ppc64le", "ppc64": "ppc64",
	"s390x": "s390x", "riscv64": "riscv64", "386": "i386", "mips": "mips", "mipsle": "mipsel",
	"mips64": "mips64", "mips64le": "mips64el", "loong64": "loongarch64",
}

// runCheck runs programs of one unpacked rootfs.
type runCheck struct {
	platform v1.Platform
	rootfs   string
	t        *rootfs.FS
	env      []string
	qemu     string // "" for native runs
	timeout  time.Duration
	f        findings
	ran      []string
}

// newRunCheck finds how to run the platform's programs on this host: natively
// for amd64 on amd64, else qemu-<arch>-static. ok is false (with a finding)
// when neither is possible.
func newRunCheck(p v1.Platform, dir string, t *rootfs.FS, cfg *v1.ConfigFile, opts Options) (*runCheck, bool) {
	r := &runCheck{platform: p, rootfs: dir, t: t, timeout: opts.RunTimeout, f: findings{name: CheckRun}}
	path, ok := envPath(cfg.Config.Env)
	if !ok {
		path = defaultPath
	}
	r.env = []string{"PATH=" + path}
	if p.Architecture == "amd64" && opts.HostArch == "amd64" {
		return r, true
	}
	arch, known := qemuArch[p.Architecture]
	if !known {
		r.f.fail("no qemu-user emulator known for " + platform.Format(p))
		return r, false
	}
	q, err := opts.Qemu(arch)
	if err != nil {
		r.f.fail("qemu-" + arch + "-static not found: apt-get install qemu-user-static")
		return r, false
	}
	r.qemu = q
	return r, true
}

// program runs the program at image path p with args and records the result;
// with version set it compares an "OS/Arch:" line with the platform.
func (r *runCheck) program(ctx context.Context, p string, args []string, version bool) {
	resolved, _, err := r.t.Resolve(p, true)
	if err != nil {
		r.f.fail(fmt.Sprintf("%s: %v", p, err))
		return
	}
	host := filepath.Join(r.rootfs, filepath.FromSlash(resolved))
	label := strings.Join(append([]string{p}, args...), " ")
	cmd, note, err := r.command(ctx, host, p, args)
	if err != nil {
		r.f.warn(fmt.Sprintf("%s not run: %v", label, err))
		return
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var out *limitedBuffer
	for attempt := 1; ; attempt++ {
		out = &limitedBuffer{max: maxOutput}
		c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
		if r.qemu == "" {
			c.Args[0] = p // argv[0] as the image would pass it (busybox picks its applet by it)
		}
		c.Env, c.Dir, c.Stdout, c.Stderr = r.env, r.rootfs, out, out
		c.WaitDelay = time.Second
		err = c.Run()
		// A native run execs the file unpacked moments ago; a child another
		// goroutine is forking holds its inherited write descriptor until it
		// execs, and Linux refuses to run a file open for writing
		// (golang/go#22315). That passes within milliseconds: try again.
		if !errors.Is(err, syscall.ETXTBSY) || attempt == txtBusyAttempts || !sleepCtx(ctx, time.Duration(attempt)*10*time.Millisecond) {
			break
		}
	}
	first := firstLine(out.Bytes())
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.f.fail(fmt.Sprintf("%s timed out after %s%s", label, r.timeout, note))
	case errors.As(err, &exit):
		r.f.fail(fmt.Sprintf("%s exited with status %d%s: %s", label, exit.ExitCode(), note, first))
	case err != nil:
		r.f.fail(fmt.Sprintf("%s: %v%s", label, err, note))
	default:
		r.checkOutput(label, out.Bytes(), version)
	}
}

// command returns the argv that runs the program at host path host: under
// qemu-user with the rootfs as its library prefix, or natively when it is
// static (a dynamic one would load the host's libraries).
func (r *runCheck) command(ctx context.Context, host, argv0 string, args []string) ([]string, string, error) {
	if r.qemu != "" {
		return append([]string{r.qemu, "-L", r.rootfs, "-0", argv0, host}, args...), "", nil
	}
	f, err := os.Open(host)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	static, err := elfcheck.Static(f)
	if err != nil {
		return nil, "", err
	}
	if !static {
		return nil, "", errors.New("dynamically linked, and native runs would load the host's libraries")
	}
	return append([]string{host}, args...), " (native)", nil
}

// checkOutput records a successful run, showing the OS/Arch line of a
// --version output when there is one and the first line otherwise.
func (r *runCheck) checkOutput(label string, out []byte, version bool) {
	line := firstLine(out)
	if version {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "OS/Arch:")
			if !ok {
				continue
			}
			want := r.platform.OS + "/" + r.platform.Architecture
			if got := strings.TrimSpace(v); got != want {
				r.f.fail(fmt.Sprintf("%s says OS/Arch %s, want %s", label, got, want))
				return
			}
			line = "OS/Arch: " + want
		}
	}
	if line == "" {
		r.ran = append(r.ran, label)
		return
	}
	r.ran = append(r.ran, label+" ("+line+")")
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	return strings.TrimSpace(string(line))
}

// limitedBuffer keeps the first max bytes written and discards the rest.
// It must not have a ReadFrom method (as an embedded bytes.Buffer would give
// it): io.Copy, which os/exec uses for a program's output, would use that
// and keep everything.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

// Bytes is what was kept.
func (b *limitedBuffer) Bytes() []byte { return b.buf.Bytes() }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// txtBusyAttempts bounds the runs of a program whose file is briefly busy.
const txtBusyAttempts = 5

// sleepCtx waits for d unless ctx ends first; it reports whether it waited.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
