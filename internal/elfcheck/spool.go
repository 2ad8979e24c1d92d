package elfcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxBaseGoBinaries bounds the search for Go binaries in a base image's
// layers, shared by the SBOM (which lists them) and verify (which checks it
// does): after that many Go binaries in stream order no more are read.
const MaxBaseGoBinaries = 1000

// SpoolELF reads the first bytes of r; when they are the ELF magic it copies
// the whole file to a temporary file in dir (os.TempDir when empty), calls fn
// with it and removes it. Other contents are skipped without reading further.
// fn's error wins over closing and removing the file.
func SpoolELF(r io.Reader, dir string, fn func(*os.File) error) error {
	return Spool(r, dir, IsELF, func(f *os.File, _ []byte) error { return fn(f) })
}

// Spool is SpoolELF for the files whose first bytes (up to 4) keep accepts:
// fn gets the temporary file and those first bytes (internal/join spools
// Windows executables with it too).
func Spool(r io.Reader, dir string, keep func(magic []byte) bool, fn func(f *os.File, magic []byte) error) (err error) {
	magic := make([]byte, 4)
	n, err := io.ReadFull(r, magic)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	if !keep(magic[:n]) {
		return nil
	}
	f, err := os.CreateTemp(dir, "bin-*")
	if err != nil {
		return err
	}
	defer func() {
		cerr := f.Close()
		rerr := os.Remove(f.Name())
		if err == nil {
			err = errors.Join(cerr, rerr)
		}
	}()
	if _, err := io.Copy(f, io.MultiReader(bytes.NewReader(magic[:n]), r)); err != nil {
		return fmt.Errorf("spool to %s: %w", f.Name(), err)
	}
	return fn(f, magic[:n])
}
