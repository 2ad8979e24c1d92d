package dockerfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// copyOp is one expanded COPY or ADD.
type copyOp struct {
	kind   string // "COPY" or "ADD"
	from   string // named context, "" for the build context
	params instructions.SourcesAndDest
	chown  string
	chmod  string
	unpack bool // ADD would unpack local archives
}

// owner is what every entry of one COPY gets.
type owner struct {
	uid, gid int
	chmod    *fs.FileMode
}

// copy turns a COPY or ADD into a step whose entries are the files to copy.
func (a *applier) copy(op copyOp, unset map[string]struct{}) error {
	var own owner
	var err error
	if own.uid, own.gid, err = parseOwner(op.chown); err != nil {
		return fmt.Errorf("%s --chown=%s: %w", op.kind, op.chown, err)
	}
	if own.chmod, err = parseChmod(op.chmod); err != nil {
		return fmt.Errorf("%s --chmod=%s: %w", op.kind, op.chmod, err)
	}
	if op.kind == "ADD" {
		for _, s := range op.params.SourcePaths {
			if err := checkLocalSource(s); err != nil {
				return err
			}
		}
	}
	ctx, err := a.context(op)
	if err != nil {
		return err
	}

	dest, destDir := a.dest(op.params.DestPath)
	var srcs []source
	for _, s := range op.params.SourcePaths {
		clean := strings.TrimPrefix(path.Clean("/"+s), "/")
		m, err := ctx.match(clean)
		if err != nil {
			return sourceError(op.kind, s, clean, ctx, err, unset)
		}
		srcs = append(srcs, m...)
	}
	if len(srcs) > 1 || a.isDir(dest) {
		destDir = true
	}

	set := &entrySet{index: map[string]int{}}
	for _, src := range srcs {
		switch {
		case src.info.IsDir():
			mode := perm(src.info.Mode())
			if src.rel == "" {
				mode = 0o755 // the context root's own mode is not sent to BuildKit
			}
			if own.chmod != nil {
				mode = *own.chmod
			}
			if err := a.addDir(set, dest, mode, own); err != nil {
				return err
			}
			if err := walkDir(set, ctx.host(src.rel), dest, own); err != nil {
				return fmt.Errorf("%s %s: %w", op.kind, src.name, err)
			}
		case src.info.Mode().IsRegular():
			if op.unpack {
				if ok, err := isArchive(ctx.host(src.rel)); err != nil {
					return fmt.Errorf("%s %s: %w", op.kind, src.name, err)
				} else if ok {
					return fmt.Errorf("%s %s: ADD would unpack this archive, which helperbuild does not do; "+
						"use COPY (or ADD --unpack=false) to copy it as a file, or unpack it into a context directory", op.kind, src.name)
				}
			}
			target := dest
			if destDir {
				if err := a.addDir(set, dest, 0o755, owner{uid: own.uid, gid: own.gid}); err != nil {
					return err
				}
				target = path.Join(dest, path.Base(src.name))
			}
			if err := set.add(fileEntry(target, ctx.host(src.rel), src.info, own), false); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s %s: %s is a %v, which cannot be copied", op.kind, src.name, src.name, src.info.Mode().Type())
		}
	}
	a.record(op.createdBy(), set.entries)
	return nil
}

// createdBy is op's history line, as BuildKit writes it.
func (op copyOp) createdBy() string {
	msg := op.kind
	if op.chown != "" {
		msg += " --chown=" + op.chown
	}
	if op.chmod != "" {
		msg += " --chmod=" + op.chmod
	}
	for _, s := range op.params.SourcePaths {
		msg += " " + s
	}
	return msg + " " + op.params.DestPath + " # buildkit"
}

// context opens the directory a COPY or ADD reads from.
func (a *applier) context(op copyOp) (*contextDir, error) {
	if op.from == "" {
		if a.ctx.Main == "" {
			return nil, fmt.Errorf("%s without --from needs a build context, and this image has none; "+
				"copy from a named context with --from=NAME (contexts: in helperbuild.yaml)", op.kind)
		}
		return openContext("build context", a.ctx.Main)
	}
	dir, ok := a.ctx.Named[op.from]
	if ok && dir == "" {
		return nil, fmt.Errorf("%s --from=%s: context %q has no directory", op.kind, op.from, op.from)
	}
	if !ok {
		names := make([]string, 0, len(a.ctx.Named))
		for n := range a.ctx.Named {
			names = append(names, n)
		}
		sort.Strings(names)
		avail := "none are set"
		if len(names) > 0 {
			avail = "available: " + strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("%s --from=%s: no context named %q (%s); add it under contexts: in helperbuild.yaml", op.kind, op.from, op.from, avail)
	}
	return openContext(fmt.Sprintf("context %q", op.from), dir)
}

// dest resolves a destination against WORKDIR; dir says it is written as a
// directory (trailing "/", ".", "..").
func (a *applier) dest(d string) (string, bool) {
	wd := a.cfg.WorkingDir
	if wd == "" {
		wd = "/"
	}
	trimmed := strings.TrimRight(d, "/")
	last := path.Base(trimmed)
	dir := d == "" || strings.HasSuffix(d, "/") || last == "." || last == ".."
	if path.IsAbs(d) {
		return path.Clean(d), dir
	}
	return path.Join("/", wd, d), dir
}

// addDir adds the destination directory of a copy unless it is "/" or known.
func (a *applier) addDir(set *entrySet, dir string, mode fs.FileMode, own owner) error {
	if dir == "/" || a.isDir(dir) {
		return nil
	}
	return set.add(rootfs.Entry{Path: dir, Kind: rootfs.Dir, Mode: mode, UID: own.uid, GID: own.gid}, true)
}

// walkDir adds the contents of the host directory root under dest. Symlinks
// are copied as links, never followed.
func walkDir(set *entrySet, root, dest string, own owner) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		target := path.Join(dest, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		var e rootfs.Entry
		switch {
		case info.IsDir():
			e = rootfs.Entry{Path: target, Kind: rootfs.Dir, Mode: perm(info.Mode()), UID: own.uid, GID: own.gid}
			if own.chmod != nil {
				e.Mode = *own.chmod
			}
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e = rootfs.Entry{Path: target, Kind: rootfs.Symlink, Linkname: link, Mode: fs.ModePerm, UID: own.uid, GID: own.gid}
		case info.Mode().IsRegular():
			e = fileEntry(target, p, info, own)
		default:
			return fmt.Errorf("%s is a %v, which cannot be copied", filepath.ToSlash(rel), info.Mode().Type())
		}
		return set.add(e, false)
	})
}

func fileEntry(target, hostPath string, info fs.FileInfo, own owner) rootfs.Entry {
	e := rootfs.Entry{Path: target, Kind: rootfs.File, Source: hostPath, Mode: perm(info.Mode()), UID: own.uid, GID: own.gid}
	if own.chmod != nil {
		e.Mode = *own.chmod
	}
	return e
}

// perm keeps the permission and setuid/setgid/sticky bits of a mode.
func perm(m fs.FileMode) fs.FileMode {
	return m & rootfs.ModeBits
}

// entrySet collects the entries of one step, one per path.
type entrySet struct {
	entries []rootfs.Entry
	index   map[string]int
}

// add adds e; a later file replaces an earlier one at the same path, as a
// later copy overwrites. For a directory already present, keepDir keeps the
// first (BuildKit leaves an existing destination's metadata alone).
func (s *entrySet) add(e rootfs.Entry, keepDir bool) error {
	i, ok := s.index[e.Path]
	if !ok {
		s.index[e.Path] = len(s.entries)
		s.entries = append(s.entries, e)
		return nil
	}
	old := s.entries[i]
	if (old.Kind == rootfs.Dir) != (e.Kind == rootfs.Dir) {
		return fmt.Errorf("%s would be both a directory and a file", e.Path)
	}
	if !(keepDir && old.Kind == rootfs.Dir) {
		s.entries[i] = e
	}
	return nil
}

// sourceError explains why a source cannot be copied.
func sourceError(kind, src, clean string, ctx *contextDir, err error, unset map[string]struct{}) error {
	var esc *escapeError
	switch {
	case errors.As(err, &esc):
		return fmt.Errorf("%s %s: source %q leads outside %s: %s; copy the file itself into the context", kind, src, clean, ctx, esc)
	case errors.Is(err, errNotFound):
		what := "not found"
		if hasMeta(clean) {
			what = "matches nothing"
		}
		msg := fmt.Sprintf("%s %s: %q %s in %s", kind, src, clean, what, ctx)
		if strings.HasPrefix(path.Clean(src), "..") || strings.Contains(src, "/../") {
			msg += "; sources are relative to the context root and \"..\" cannot leave it"
		}
		if len(unset) > 0 {
			names := make([]string, 0, len(unset))
			for n := range unset {
				names = append(names, "$"+n)
			}
			sort.Strings(names)
			msg += fmt.Sprintf("; %s expanded to nothing (declare it with ARG after FROM)", strings.Join(names, ", "))
		}
		return errors.New(msg)
	default:
		return fmt.Errorf("%s %s: %w", kind, src, err)
	}
}
