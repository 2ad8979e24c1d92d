package publish

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/helperbuild/helperbuild/internal/outfile"
)

// CheckLayoutDir fails when ToLayout could not write the layout at dir, so
// a build can stop before compiling: a path under a file, a directory that
// cannot be created or written (a read-only or virtual file system such as
// /proc, no permission), an index.json that is not an OCI index. It creates
// nothing that outlives the call.
func CheckLayoutDir(dir string) error {
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is a file, not a directory", p)
			}
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("cannot create %s: %v", dir, outfile.Reason(err))
		}
		p = parent
	}
	if p == filepath.Clean(dir) {
		if _, err := openLayout(dir); err != nil {
			return fmt.Errorf("%s is not a usable OCI layout: %v", dir, err)
		}
		return probeFile(dir, dir)
	}
	probe, err := os.MkdirTemp(p, ".helperbuild-probe-")
	if err != nil {
		return fmt.Errorf("cannot create %s: %s does not take new directories (%v)", dir, p, outfile.Reason(err))
	}
	return os.Remove(probe)
}

// CheckArchiveFile fails when ToArchive could not write file: a directory
// there, a file where a parent directory goes, a directory that takes no
// new files (the parent, or the nearest existing ancestor, where the
// missing parents would be created).
func CheckArchiveFile(file string) error {
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory; give a file name, e.g. oci-archive:image.tar", file)
	}
	dir := filepath.Dir(file)
	for {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			return fmt.Errorf("%s is a file, not a directory", dir)
		}
		if err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	return probeFile(file, dir)
}

// probeFile creates and removes a file in dir, where target will be written.
func probeFile(target, dir string) error {
	f, err := outfile.CreateTemp(dir, ".helperbuild-probe-")
	if err != nil {
		return fmt.Errorf("cannot write %s: %s takes no new files (%v)", target, dir, outfile.Reason(err))
	}
	f.Close()
	return os.Remove(f.Name())
}
