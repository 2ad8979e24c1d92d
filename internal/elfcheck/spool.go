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
func SpoolELF(r io.Reader, dir string, fn func(*os.File) error) (err error) {
	magic := make([]byte, 4)
	n, err := io.ReadFull(r, magic)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	if !IsELF(magic[:n]) {
		return nil
	}
	f, err := os.CreateTemp(dir, "elf-*")
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
	return fn(f)
}
