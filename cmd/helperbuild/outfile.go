package main

import (
	"os"
	"path/filepath"
)

// checkOutputFile fails early, before anything is built or published,
// when the file flag (--metadata-file, --dotenv) names could not be
// written.
func checkOutputFile(flag, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("%s %s is a directory; give a file name", flag, path)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("%s %s: directory %s does not exist", flag, path, dir)
	}
	probe, err := os.CreateTemp(dir, ".helperbuild-probe-*")
	if err != nil {
		return usagef("%s %s: %v", flag, path, reason(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// writeFileAtomic writes data to path through a file beside it that is
// then renamed, so a reader never sees half a file and a failed write
// leaves the old one.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
