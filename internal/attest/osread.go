package attest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// Where a base image keeps what ReadOS reads.
const (
	osReleasePath    = "/etc/os-release"
	osReleaseLibPath = "/usr/lib/os-release"
	apkInstalledPath = "/lib/apk/db/installed"
	dpkgStatusPath   = "/var/lib/dpkg/status"
	dpkgStatusDir    = "/var/lib/dpkg/status.d" // distroless: one stanza file per package
)

// ReadOS reads a base image's os-release and package databases: fs is the
// base's flattened filesystem (rootfs.Flatten of layers) and layers the
// base's layers, of which only those holding the files are streamed again.
// Paths are resolved through the image's symlinks (/etc/os-release is often
// one to /usr/lib/os-release). A base with none of the files gives a zero
// OS and no error; a file that is there but cannot be parsed is an error.
func ReadOS(ctx context.Context, fs *rootfs.FS, layers []v1.Layer) (OS, error) {
	return ReadOSKept(ctx, fs, nil, layers)
}

// OSFile says whether a base layer's file at the clean path p may be one
// ReadOS reads: pass it to rootfs.FlattenKeeping so the contents come from
// the pass that flattens the base. It takes every file named like one
// (os-release, apk's installed, dpkg's status and status.d stanzas)
// wherever it is, as a symlink may lead to any of them.
func OSFile(p string) bool {
	dir, base := path.Split(p)
	return base == "os-release" || base == "installed" || base == "status" ||
		(strings.HasSuffix(dir, "/status.d/") && !strings.HasSuffix(base, ".md5sums"))
}

// ReadOSKept is ReadOS taking the contents of the files it needs from kept
// (rootfs.FlattenKeeping with OSFile) and streaming again only the layers
// of those kept lacks.
func ReadOSKept(ctx context.Context, fs *rootfs.FS, kept map[rootfs.Source][]byte, layers []v1.Layer) (OS, error) {
	type wanted struct {
		path  string
		src   rootfs.Source
		parse func(io.Reader) error
	}
	var out OS
	var apk, dpkg []OSPackage // apk first, whatever order the layers give
	var files []wanted
	add := func(p string, parse func(io.Reader) error) bool {
		_, info, err := fs.Resolve(p, true)
		if err != nil || !info.IsRegular() {
			return false
		}
		files = append(files, wanted{p, info.Source, parse})
		return true
	}
	release := func(r io.Reader) (err error) { out.Release, err = ParseOSRelease(r); return err }
	if !add(osReleasePath, release) {
		add(osReleaseLibPath, release)
	}
	add(apkInstalledPath, func(r io.Reader) error {
		pkgs, err := ParseAPKInstalled(r)
		apk = append(apk, pkgs...)
		return err
	})
	dpkgParse := func(r io.Reader) error {
		pkgs, err := ParseDpkgStatus(r)
		dpkg = append(dpkg, pkgs...)
		return err
	}
	add(dpkgStatusPath, dpkgParse)
	statusDir, err := statusDFiles(fs)
	if err != nil {
		return OS{}, err
	}
	for _, p := range statusDir {
		add(p, dpkgParse)
	}
	if len(files) == 0 {
		return OS{}, nil
	}

	// Two paths can share their contents (hard links); each source is read
	// and parsed once, by the first file that wants it.
	want := map[rootfs.Source]bool{}
	parser := map[rootfs.Source]wanted{}
	for _, w := range files {
		if _, dup := parser[w.src]; dup {
			continue
		}
		parser[w.src] = w
		data, ok := kept[w.src]
		if !ok {
			want[w.src] = true
			continue
		}
		if err := w.parse(bytes.NewReader(data)); err != nil {
			return OS{}, fmt.Errorf("base package database: %s: %w", w.path, err)
		}
	}
	if len(want) == 0 {
		out.Packages = append(apk, dpkg...)
		return out, nil
	}
	err = rootfs.ReadSources(ctx, layers, want, func(src rootfs.Source, r io.Reader) error {
		w := parser[src]
		if err := w.parse(r); err != nil {
			return fmt.Errorf("%s: %w", w.path, err)
		}
		return nil
	})
	if err != nil {
		return OS{}, fmt.Errorf("base package database: %w", err)
	}
	out.Packages = append(apk, dpkg...)
	return out, nil
}

// errStop ends a Walk early.
var errStop = errors.New("stop")

// statusDFiles lists the regular files of /var/lib/dpkg/status.d (resolved
// through symlinks), without the .md5sums files distroless keeps beside
// the stanzas, in lexical order.
func statusDFiles(fs *rootfs.FS) ([]string, error) {
	dir, info, err := fs.Resolve(dpkgStatusDir, true)
	if err != nil || !info.IsDir() {
		return nil, nil
	}
	var out []string
	prefix := dir + "/"
	inside := false
	err = fs.Walk(func(p string, info rootfs.Info) error {
		if !strings.HasPrefix(p, prefix) {
			if inside {
				return errStop // a directory's entries are walked together
			}
			return nil
		}
		inside = true
		if info.IsRegular() && !strings.Contains(p[len(prefix):], "/") && !strings.HasSuffix(p, ".md5sums") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return out, nil
}
