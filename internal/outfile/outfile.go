package outfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Mode is the mode of every file Write creates, before the umask.
const Mode = 0o644

// Write writes path through a temporary file beside it, renamed into place
// only when write returned nil and the file closed cleanly. Missing parent
// directories are created (mode 0755 before the umask).
func Write(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteBytes is Write of data.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteJSON is Write of v as indented JSON and a newline: the metadata
// files of build, push, merge and verify, a layout's index.json.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteBytes(path, append(data, '\n'))
}

// CreateTemp is os.CreateTemp with Mode instead of 0600: the file a
// rename puts in place has the mode it will keep.
func CreateTemp(dir, prefix string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, Mode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("no unused temporary file name in %s", dir)
}

// Check fails when Write could not write path: a directory there, a file
// where a parent directory goes, a directory that takes no new files (the
// parent, or the nearest existing ancestor Write would create the parents
// in). what names the file in the error ("--metadata-file m.json"). It
// creates nothing that outlives the call.
func Check(what, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory; give a file name", what)
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			return fmt.Errorf("%s: %s is not a directory", what, dir)
		}
		if err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir) // Write creates it; the probe asks the one above
	}
	probe, err := CreateTemp(dir, ".helperbuild-probe-")
	if err != nil {
		return fmt.Errorf("%s: %v", what, Reason(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// Reason is the system's word for a failed file operation ("read-only file
// system"), without the path the message already names.
func Reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
