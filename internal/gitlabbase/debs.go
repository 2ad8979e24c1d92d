package gitlabbase

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// Packages are the Debian packages Read needs, per architecture, in the
// .deb cache directory (scripts/install-test-deps.sh fills it): the
// runner's base, then what the helper adds (git with the libraries it
// links, git-lfs).
var Packages = []string{"bash-static", "busybox-static", "dumb-init", "libc6", "git", "git-lfs", "libpcre2-8-0", "zlib1g"}

// Debs holds the files a base takes from the .debs of one architecture.
type Debs struct {
	Arch     string // Debian architecture: amd64, arm64, armhf, ppc64el, s390x
	Bash     []byte // bash-static's /bin/bash-static
	Busybox  []byte // busybox-static's /bin/busybox
	DumbInit []byte // dumb-init's /usr/bin/dumb-init
	// Libc are the loader and libc.so.6 of libc6 with their symlinks, by
	// path without the leading "/".
	Libc map[string]file
	// Git and GitLFS are git's /usr/bin/git and git-lfs' /usr/bin/git-lfs;
	// GitLibs the shared libraries git links besides libc.
	Git, GitLFS []byte
	GitLibs     map[string]file
	Version     map[string]string // package -> version
}

type file struct {
	body []byte
	link string // symlink target when set
	mode int64
}

// Read takes what a base needs from the .debs of arch in dir.
func Read(ctx context.Context, dir, arch string) (*Debs, error) {
	d := &Debs{Arch: arch, Libc: map[string]file{}, GitLibs: map[string]file{}, Version: map[string]string{}}
	for _, pkg := range Packages {
		debs, _ := filepath.Glob(filepath.Join(dir, pkg+"_*_"+arch+".deb"))
		if len(debs) != 1 {
			return nil, fmt.Errorf("want one %s .deb for %s in %s, found %d: run scripts/install-test-deps.sh", pkg, arch, dir, len(debs))
		}
		v, err := exec.CommandContext(ctx, "dpkg-deb", "--field", debs[0], "Version").Output()
		if err != nil {
			return nil, fmt.Errorf("dpkg-deb --field %s Version: %w", debs[0], err)
		}
		d.Version[pkg] = strings.TrimSpace(string(v))
		err = eachFile(ctx, debs[0], func(hdr *tar.Header, body []byte) {
			name := strings.TrimPrefix(hdr.Name, "./")
			switch {
			case pkg == "bash-static" && name == "bin/bash-static":
				d.Bash = body
			case pkg == "busybox-static" && name == "bin/busybox":
				d.Busybox = body
			case pkg == "dumb-init" && name == "usr/bin/dumb-init":
				d.DumbInit = body
			case pkg == "libc6" && isLoaderOrLibc(name):
				d.Libc[name] = file{body: body, link: hdr.Linkname, mode: hdr.Mode}
			case pkg == "git" && name == "usr/bin/git":
				d.Git = body
			case pkg == "git-lfs" && name == "usr/bin/git-lfs":
				d.GitLFS = body
			case (pkg == "libpcre2-8-0" || pkg == "zlib1g") && strings.Contains(path.Base(name), ".so"):
				d.GitLibs[name] = file{body: body, link: hdr.Linkname, mode: hdr.Mode}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if d.Bash == nil || d.Busybox == nil || d.DumbInit == nil || len(d.Libc) == 0 || d.Git == nil || d.GitLFS == nil || len(d.GitLibs) == 0 {
		return nil, fmt.Errorf("the .debs of %s in %s lack bash, busybox, dumb-init, libc, git, git-lfs or git's libraries", arch, dir)
	}
	return d, nil
}

// isLoaderOrLibc reports whether a libc6 path is the ELF loader, libc.so.6
// or a link to one of them.
func isLoaderOrLibc(name string) bool {
	base := path.Base(name)
	if !strings.HasPrefix(name, "lib") && !strings.HasPrefix(name, "usr/lib") {
		return false
	}
	return base == "libc.so.6" || strings.HasPrefix(base, "ld-linux") || strings.HasPrefix(base, "ld64.so")
}

// eachFile calls fn with each regular file (with its contents) and symlink
// of a .deb's data.
func eachFile(ctx context.Context, deb string, fn func(*tar.Header, []byte)) error {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w: %s", deb, err, stderr.String())
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", deb, err)
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
			body, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			fn(hdr, body)
		case tar.TypeSymlink:
			fn(hdr, nil)
		}
	}
}
