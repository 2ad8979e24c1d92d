package verify

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/elfcheck"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// maxText bounds how much of a script or /etc/passwd is read into memory.
const maxText = 1 << 20

// located is a required item found in the tree.
type located struct {
	item
	path string      // where it was found (the PATH entry for commands)
	info rootfs.Info // after following symlinks
}

// contractCheck evaluates one spec against one flattened image.
type contractCheck struct {
	spec     spec
	t        *rootfs.FS
	pathDirs []string
	f        findings
	found    []located
	elfs     map[rootfs.Source][]located
	texts    map[rootfs.Source][]func([]byte)
	// runtime user; root unless the spec runs as a passwd user.
	uid, gid int
	user     string
}

// checkContract checks the tree of one image against spec, reading only the
// few files whose contents matter (scripts, /etc/passwd, static binaries).
func checkContract(ctx context.Context, s spec, t *rootfs.FS, cfg *v1.ConfigFile, layers []v1.Layer, tmpDir string) ([]Check, error) {
	c := &contractCheck{
		spec: s, t: t, f: findings{name: CheckContract},
		elfs: map[rootfs.Source][]located{}, texts: map[rootfs.Source][]func([]byte){},
		user: "root",
	}
	p, ok := envPath(cfg.Config.Env)
	if !ok {
		p = defaultPath
	}
	c.pathDirs = strings.Split(p, ":")
	for _, issue := range t.Issues() {
		c.f.fail(issue + ": a container runtime cannot apply this layer")
	}
	if s.config != nil {
		s.config(&cfg.Config, &c.f)
	}
	for _, it := range s.items {
		c.locate(it)
	}
	c.wantContents()
	if s.runtimeUser {
		c.uid, c.gid, c.user = 100, 65533, "uid 100"
		c.readPasswd()
	}
	if err := c.read(ctx, layers, tmpDir); err != nil {
		return nil, err
	}
	if s.runtimeUser {
		c.checkDirs()
	}
	for _, l := range c.found {
		if l.kind == executable && !c.canExec(l.info) {
			c.f.failAt(l.path, fmt.Sprintf("%s is not executable by %s (mode %04o): %s", l.path, c.user, l.info.Mode.Perm(), l.why))
		}
	}
	return c.f.done(fmt.Sprintf("%d required items present", len(c.found))), nil
}

// locate finds it by path or on PATH and records a finding when it is
// missing or of the wrong kind.
func (c *contractCheck) locate(it item) {
	where, n := it.path, rootfs.Info{}
	if it.onPath() {
		var ok bool
		where, n, ok = c.lookPath(it.path)
		if !ok {
			c.f.failAt(it.path, fmt.Sprintf("%s missing from PATH: %s", it.path, it.why))
			return
		}
	} else {
		var err error
		_, n, err = c.t.Resolve(it.path, true)
		if err != nil {
			c.f.failAt(it.path, c.missing(it.path, err)+": "+it.why)
			return
		}
	}
	switch {
	case !n.IsRegular():
		c.f.failAt(where, fmt.Sprintf("%s is not a regular file: %s", where, it.why))
		return
	case it.kind == nonEmpty && n.Size == 0:
		c.f.failAt(where, fmt.Sprintf("%s is empty: %s", where, it.why))
		return
	}
	l := located{item: it, path: where, info: n}
	c.found = append(c.found, l)
	if it.static {
		c.elfs[n.Source] = append(c.elfs[n.Source], l)
	}
}

// missing phrases why p could not be resolved.
func (c *contractCheck) missing(p string, err error) string {
	if errors.Is(err, rootfs.ErrLoop) {
		return p + " missing (" + err.Error() + ")"
	}
	if n, ok := c.t.Lookup(p); ok && n.Type == tar.TypeSymlink {
		return fmt.Sprintf("%s missing (symlink to %s leads nowhere)", p, n.Linkname)
	}
	return p + " missing"
}

// lookPath searches the image's PATH for a regular file named name, the way
// a shell would inside the container.
func (c *contractCheck) lookPath(name string) (string, rootfs.Info, bool) {
	for _, dir := range c.pathDirs {
		if dir == "" {
			continue
		}
		p := strings.TrimSuffix(dir, "/") + "/" + name
		if _, n, err := c.t.Resolve(p, true); err == nil && n.IsRegular() {
			return p, n, true
		}
	}
	return "", rootfs.Info{}, false
}

// wantContents registers the scripts whose contents are checked.
func (c *contractCheck) wantContents() {
	for _, l := range c.found {
		switch {
		case l.path == "/entrypoint":
			c.texts[l.info.Source] = append(c.texts[l.info.Source], c.checkEntrypoint)
		case l.item.path == "gitlab-runner-build" && c.spec.buildScript:
			p := l.path
			c.texts[l.info.Source] = append(c.texts[l.info.Source], func(b []byte) {
				if !hasLine(b, "umask 0000") {
					c.f.failAt(p, p+" does not run umask 0000: files the helper creates must be usable by the build container's user")
				}
			})
		}
	}
}

func (c *contractCheck) checkEntrypoint(b []byte) {
	last := lastCommand(b)
	if !c.spec.entrypoint(strings.Fields(last)) {
		c.f.failAt("/entrypoint", fmt.Sprintf("/entrypoint does not end with %s (last line %q): %s", c.spec.entrypointWant, last, c.spec.entrypointWhy))
	}
}

// readPasswd registers /etc/passwd for the runtime user check.
func (c *contractCheck) readPasswd() {
	const why = "the Helm chart runs the runner as uid 100 (Alpine) or 999 (Ubuntu) with home " + runnerHome
	_, n, err := c.t.Resolve("/etc/passwd", true)
	if err != nil || !n.IsRegular() {
		c.f.failAt("/etc/passwd", "/etc/passwd missing: "+why)
		return
	}
	c.texts[n.Source] = append(c.texts[n.Source], func(b []byte) {
		uid, gid, ok := runnerUser(b)
		if !ok {
			c.f.failAt("/etc/passwd", "/etc/passwd has no user with uid 100 or 999 and home "+runnerHome+": "+why)
			return
		}
		c.uid, c.gid, c.user = uid, gid, "uid "+strconv.Itoa(uid)
	})
}

// runnerUser finds the passwd entry the Helm chart runs as.
func runnerUser(b []byte) (uid, gid int, ok bool) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimSpace(line), ":")
		if len(f) < 7 || strings.TrimSuffix(f[5], "/") != runnerHome {
			continue
		}
		u, uerr := strconv.Atoi(f[2])
		g, gerr := strconv.Atoi(f[3])
		if uerr == nil && gerr == nil && (u == 100 || u == 999) {
			return u, g, true
		}
	}
	return 0, 0, false
}

// checkDirs checks the runtime user's home and /tmp.
func (c *contractCheck) checkDirs() {
	for _, d := range []struct{ path, why string }{
		{runnerHome, "the runner keeps its configuration in " + runnerHome + "/.gitlab-runner"},
		{"/tmp", "the runner and the chart's scripts write temporary files"},
	} {
		_, n, err := c.t.Resolve(d.path, true)
		switch {
		case err != nil:
			c.f.failAt(d.path, c.missing(d.path, err)+": "+d.why)
		case !n.IsDir():
			c.f.failAt(d.path, d.path+" is not a directory: "+d.why)
		case !c.can(n, 0o2):
			c.f.failAt(d.path, fmt.Sprintf("%s is not writable by %s (owner %d, mode %04o): %s", d.path, c.user, n.UID, n.Mode.Perm(), d.why))
		}
	}
}

func (c *contractCheck) canExec(n rootfs.Info) bool { return c.can(n, 0o1) }

// can reports whether the runtime user has permission bit (4 read, 2 write,
// 1 execute) on n; root needs any x bit to execute and nothing to write.
func (c *contractCheck) can(n rootfs.Info, bit fs.FileMode) bool {
	perm := n.Mode.Perm()
	switch {
	case c.uid == 0 && bit == 0o1:
		return perm&0o111 != 0
	case c.uid == 0:
		return true
	case n.UID == c.uid:
		return perm&(bit<<6) != 0
	case n.GID == c.gid:
		return perm&(bit<<3) != 0
	default:
		return perm&bit != 0
	}
}

// read streams the layers holding the registered files once.
func (c *contractCheck) read(ctx context.Context, layers []v1.Layer, tmpDir string) error {
	want := map[rootfs.Source]bool{}
	for s := range c.elfs {
		want[s] = true
	}
	for s := range c.texts {
		want[s] = true
	}
	return rootfs.ReadSources(ctx, layers, want, func(src rootfs.Source, r io.Reader) error {
		if ls := c.elfs[src]; len(ls) > 0 {
			return c.checkStatic(r, ls, tmpDir)
		}
		b, err := io.ReadAll(io.LimitReader(r, maxText))
		if err != nil {
			return err
		}
		for _, fn := range c.texts[src] {
			fn(b)
		}
		return nil
	})
}

func (c *contractCheck) checkStatic(r io.Reader, ls []located, tmpDir string) error {
	isELF := false
	err := elfcheck.SpoolELF(r, tmpDir, func(f *os.File) error {
		isELF = true
		static, err := elfcheck.Static(f)
		for _, l := range ls {
			switch {
			case err != nil:
				c.f.failAt(l.path, fmt.Sprintf("%s: %v: %s", l.path, err, l.staticWhy))
			case !static:
				c.f.failAt(l.path, fmt.Sprintf("%s is dynamically linked: %s", l.path, l.staticWhy))
			}
		}
		return nil
	})
	if err == nil && !isELF {
		for _, l := range ls {
			c.f.failAt(l.path, fmt.Sprintf("%s is not an ELF binary: %s", l.path, l.staticWhy))
		}
	}
	return err
}

// lastCommand returns the last line of a script that is neither blank nor a
// comment, trimmed.
func lastCommand(b []byte) string {
	last := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), maxText)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			last = line
		}
	}
	return last
}

func hasLine(b []byte, want string) bool {
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Join(strings.Fields(line), " ") == want {
			return true
		}
	}
	return false
}
