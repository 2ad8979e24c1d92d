package gitlabbase

import (
	"archive/tar"
	"bytes"
	"sort"
	"strings"
	"time"
)

// Kind is which GitLab image a base is for.
type Kind int

const (
	Runner Kind = iota // /entrypoint execs gitlab-runner "$@"
	Helper             // /entrypoint execs "$@"; gitlab-runner-build
)

// Defect is one seeded defect of a base; the zero value is none.
type Defect string

// The seeded defects, each what a node would trip over.
const (
	BashNotBash         Defect = "/bin/bash is not bash"             // Options.NotBash at /bin/bash
	CRLFEntrypoint      Defect = "/entrypoint has CRLF line ends"    // the kernel looks for "bash\r"
	EntrypointNotExec   Defect = "/entrypoint is not executable"     // mode 0644
	EntrypointDropsArgs Defect = "/entrypoint drops its arguments"   // exec gitlab-runner
	NoSeqBashSh         Defect = "no seq, sh is bash"                // bash cannot supply seq
	NoSeqBusyboxSh      Defect = "no seq, sh is busybox"             // busybox's sh runs its applet: passes
	NoPgrep             Defect = "no /usr/bin/pgrep"                 // the probe's absolute path
	PgrepBusybox        Defect = "/usr/bin/pgrep links to busybox"   // Debian's busybox has no pgrep applet
	DumbInitNoLoader    Defect = "dumb-init without its ELF loader"  // libc6 left out
	ForeignBash         Defect = "bash of another architecture"      // Options.ForeignBash at /bin/bash
	BuildWithoutUmask   Defect = "gitlab-runner-build without umask" // files the build user cannot change
	HomeNotWritable     Defect = "home not writable by uid 100"      // /home/gitlab-runner root's 0755
	EntrypointHangs     Defect = "/entrypoint never ends"            // sleeps; the step's time limit must end it

	// ConfigDirUncovered: uid 100's home (passwd) is /var/lib/gitlab-runner,
	// root's 0755: gitlab-runner's $HOME/.gitlab-runner is outside the
	// chart's emptyDir and not writable. HomeElsewhere: the same home, but
	// uid 100's: it passes.
	ConfigDirUncovered Defect = "config dir not writable by uid 100, no emptyDir over it"
	HomeElsewhere      Defect = "home outside the emptyDir, writable by uid 100"
)

// Options are the inputs a base needs besides the .debs.
type Options struct {
	Pgrep  []byte // a pgrep for the architecture (busybox-static has none)
	CA     []byte // the CA bundle
	Epoch  time.Time
	Defect Defect
	// NotBash is a program put at /bin/bash for BashNotBash; ForeignBash is
	// another architecture's bash for ForeignBash.
	NotBash, ForeignBash []byte
}

// Applets are the busybox applets linked in /bin: what the chart's scripts,
// the helper's job scripts and the images' entrypoints use.
var Applets = []string{"sh", "ash", "awk", "cat", "chmod", "cmp", "cp", "cut", "echo", "env", "false", "find", "grep",
	"head", "hostname", "id", "ls", "mkdir", "mv", "printf", "rm", "sed", "seq", "sleep", "sort", "tail", "tee",
	"timeout", "touch", "tr", "true", "uname", "wc"}

const (
	runnerEntrypoint = `#!/bin/bash
# as GitLab Runner's image: import a custom CA, then run gitlab-runner
CA_CERTIFICATES_PATH=${CA_CERTIFICATES_PATH:-/etc/gitlab-runner/certs/ca.crt}
if [ -f "$CA_CERTIFICATES_PATH" ]; then
  cat "$CA_CERTIFICATES_PATH" >> /etc/ssl/certs/ca-certificates.crt
fi
exec gitlab-runner "$@"
`
	helperEntrypoint = `#!/bin/bash
# as GitLab Runner's helper image: import a custom CA, then run the command
CA_CERTIFICATES_PATH=${CA_CERTIFICATES_PATH:-/etc/gitlab-runner/certs/ca.crt}
if [ -f "$CA_CERTIFICATES_PATH" ]; then
  cat "$CA_CERTIFICATES_PATH" >> /etc/ssl/certs/ca-certificates.crt
fi
exec "$@"
`
	buildScript = "#!/bin/bash\n\numask 0000\nexec /bin/bash\n"
)

type entry struct {
	hdr  tar.Header
	body []byte
}

// Layer returns the base layer (an uncompressed tar) of kind for d, with
// opts.Defect seeded.
func (d *Debs) Layer(kind Kind, opts Options) ([]byte, error) {
	b := &builder{epoch: opts.Epoch, entries: map[string]*entry{}}
	for _, dir := range []string{"bin", "etc", "etc/ssl", "etc/ssl/certs", "home", "lib", "root", "usr", "usr/bin",
		"usr/local", "usr/local/bin", "usr/share", "usr/share/gitlab-runner", "var", "var/lib", "var/lib/dpkg"} {
		b.dir(dir, 0o755, 0, 0)
	}
	b.dir("tmp", 0o1777, 0, 0)
	b.dir("root", 0o700, 0, 0)
	home := 100
	if opts.Defect == HomeNotWritable {
		home = 0
	}
	b.dir("home/gitlab-runner", 0o755, home, 65533)
	passwdHome := "/home/gitlab-runner"
	if opts.Defect == ConfigDirUncovered || opts.Defect == HomeElsewhere {
		passwdHome = "/var/lib/gitlab-runner"
		owner := 0
		if opts.Defect == HomeElsewhere {
			owner = 100
		}
		b.dir("var/lib/gitlab-runner", 0o755, owner, 65533)
	}

	b.programs(d, opts)
	b.file("etc/ssl/certs/ca-certificates.crt", 0o644, opts.CA)
	b.file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\ngitlab-runner:x:100:65533:GitLab Runner:"+passwdHome+":/bin/sh\n"))
	b.file("etc/group", 0o644, []byte("root:x:0:\ngitlab-runner:x:65533:\n"))
	b.file("etc/os-release", 0o644, []byte("ID=debian\nVERSION_ID=\"12\"\n"))
	b.file("var/lib/dpkg/status", 0o644, []byte(d.status()))
	b.file("usr/share/gitlab-runner/clear-docker-cache", 0o755, []byte("#!/bin/sh\nexit 0\n"))

	entry, mode := runnerEntrypoint, int64(0o755)
	if kind == Helper {
		entry = helperEntrypoint
	}
	switch opts.Defect {
	case CRLFEntrypoint:
		entry = strings.ReplaceAll(entry, "\n", "\r\n")
	case EntrypointNotExec:
		mode = 0o644
	case EntrypointHangs:
		entry = "#!/bin/bash\nexec sleep 100000\n"
	case EntrypointDropsArgs:
		entry = strings.Replace(strings.Replace(entry, `exec gitlab-runner "$@"`, "exec gitlab-runner", 1), `exec "$@"`, "exec gitlab-runner-helper", 1)
	}
	b.file("entrypoint", mode, []byte(entry))
	if kind == Helper {
		b.file("usr/bin/git", 0o755, d.Git)
		b.file("usr/bin/git-lfs", 0o755, d.GitLFS)
		for name, f := range d.GitLibs {
			b.parents(name)
			if f.link != "" {
				b.link(name, f.link)
			} else {
				b.file(name, f.mode, f.body)
			}
		}
		build := buildScript
		if opts.Defect == BuildWithoutUmask {
			build = strings.Replace(build, "umask 0000\n", "", 1)
		}
		b.file("usr/bin/gitlab-runner-build", 0o755, []byte(build))
	}
	return b.tar()
}

// programs adds bash, busybox and its applet links, pgrep, dumb-init and the
// libc it links, with opts.Defect seeded.
func (b *builder) programs(d *Debs, opts Options) {
	bash := d.Bash
	switch opts.Defect {
	case BashNotBash:
		bash = opts.NotBash
	case ForeignBash:
		bash = opts.ForeignBash
	}
	b.file("bin/bash", 0o755, bash)
	b.file("bin/busybox", 0o755, d.Busybox)
	for _, a := range Applets {
		switch {
		case a == "seq" && (opts.Defect == NoSeqBashSh || opts.Defect == NoSeqBusyboxSh):
			continue
		case a == "sh" && opts.Defect == NoSeqBashSh:
			b.link("bin/sh", "bash")
			continue
		case a == "env":
			b.link("usr/bin/env", "/bin/busybox")
			continue
		}
		b.link("bin/"+a, "busybox")
	}
	switch opts.Defect {
	case NoPgrep:
	case PgrepBusybox:
		b.link("usr/bin/pgrep", "/bin/busybox")
	default:
		b.file("usr/bin/pgrep", 0o755, opts.Pgrep)
	}
	b.file("usr/bin/dumb-init", 0o755, d.DumbInit)
	for name, f := range d.Libc {
		if opts.Defect == DumbInitNoLoader && !strings.HasSuffix(name, "libc.so.6") {
			continue
		}
		b.parents(name)
		if f.link != "" {
			b.link(name, f.link)
		} else {
			b.file(name, f.mode, f.body)
		}
	}
}

// status is dpkg's status file for the packages a base holds, so an SBOM
// lists them.
func (d *Debs) status() string {
	var s strings.Builder
	for _, pkg := range Packages {
		s.WriteString("Package: " + pkg + "\nStatus: install ok installed\nArchitecture: " + d.Arch + "\nVersion: " + d.Version[pkg] + "\n\n")
	}
	return s.String()
}

type builder struct {
	epoch   time.Time
	entries map[string]*entry
}

func (b *builder) add(h tar.Header, body []byte) {
	h.ModTime, h.Format = b.epoch, tar.FormatPAX
	b.entries[strings.TrimSuffix(h.Name, "/")] = &entry{hdr: h, body: body}
}

func (b *builder) dir(name string, mode int64, uid, gid int) {
	b.add(tar.Header{Name: name + "/", Typeflag: tar.TypeDir, Mode: mode, Uid: uid, Gid: gid}, nil)
}

func (b *builder) parents(name string) {
	for i := range name {
		if name[i] == '/' {
			if _, ok := b.entries[name[:i]]; !ok {
				b.dir(name[:i], 0o755, 0, 0)
			}
		}
	}
}

func (b *builder) file(name string, mode int64, body []byte) {
	b.add(tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(body))}, body)
}

func (b *builder) link(name, target string) {
	b.add(tar.Header{Name: name, Typeflag: tar.TypeSymlink, Mode: 0o777, Linkname: target}, nil)
}

// tar writes the entries sorted by name, so parents come first and the
// layer is the same on every run.
func (b *builder) tar() ([]byte, error) {
	names := make([]string, 0, len(b.entries))
	for n := range b.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := b.entries[n]
		if err := tw.WriteHeader(&e.hdr); err != nil {
			return nil, err
		}
		if e.hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.body); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
