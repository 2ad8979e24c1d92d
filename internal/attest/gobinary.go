package attest

import (
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Binary is one Go executable helperbuild put into an image.
type Binary struct {
	// Path is where the image holds it ("/usr/bin/gitlab-runner-helper").
	Path string
	// Info is its Go build info (debug/buildinfo).
	Info *debug.BuildInfo
	// SHA256 is the digest of the file's bytes; zero for a base's binary
	// (BaseScan), which the base's digest pins.
	SHA256 v1.Hash
}

// ReadBinary reads the build info of the Go executable r (size bytes long)
// that the image holds at pathInImage, and hashes it.
func ReadBinary(pathInImage string, r io.ReaderAt, size int64) (Binary, error) {
	bi, err := buildinfo.Read(r)
	if err != nil {
		return Binary{}, fmt.Errorf("binary %s: Go build info: %w", pathInImage, err)
	}
	h, n, err := v1.SHA256(io.NewSectionReader(r, 0, size))
	if err != nil {
		return Binary{}, fmt.Errorf("binary %s: %w", pathInImage, err)
	}
	if n != size {
		return Binary{}, fmt.Errorf("binary %s: read %d bytes, want %d", pathInImage, n, size)
	}
	return Binary{Path: pathInImage, Info: bi, SHA256: h}, nil
}

// OpenBinary is ReadBinary for the host file file.
func OpenBinary(pathInImage, file string) (Binary, error) {
	f, size, err := openBinary(pathInImage, file)
	if err != nil {
		return Binary{}, err
	}
	defer f.Close()
	return ReadBinary(pathInImage, f, size)
}

// OpenHashedBinary is OpenBinary for a file whose SHA-256 and size the
// caller already computed from its contents (layer.Options.Hashed): only
// the build info is read. A file whose size is not size any more is an
// error.
func OpenHashedBinary(pathInImage, file string, sum v1.Hash, size int64) (Binary, error) {
	f, now, err := openBinary(pathInImage, file)
	if err != nil {
		return Binary{}, err
	}
	defer f.Close()
	if now != size {
		return Binary{}, fmt.Errorf("binary %s: %s changed while the release ran (%d bytes, hashed at %d)", pathInImage, file, now, size)
	}
	bi, err := buildinfo.Read(f)
	if err != nil {
		return Binary{}, fmt.Errorf("binary %s: Go build info: %w", pathInImage, err)
	}
	return Binary{Path: pathInImage, Info: bi, SHA256: sum}, nil
}

// openBinary opens the host file file of the image's pathInImage and
// says its size.
func openBinary(pathInImage, file string) (*os.File, int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, fmt.Errorf("binary %s: %w", pathInImage, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("binary %s: %w", pathInImage, err)
	}
	return f, st.Size(), nil
}

// check says what b lacks; hashed: its SHA256 too.
func (b Binary) check(hashed bool) error {
	switch {
	case b.Path == "":
		return fmt.Errorf("binary without a path in the image")
	case b.Info == nil:
		return fmt.Errorf("binary %s: no build info", b.Path)
	case hashed && b.SHA256 == (v1.Hash{}):
		return fmt.Errorf("binary %s: no SHA256", b.Path)
	}
	return nil
}

// goModule is a module as compiled into a binary: for a replaced module the
// replacement, noted in comment.
type goModule struct {
	path, version, sum, comment string
}

// compiled returns the module whose code m's entry in the build info stands
// for. A module replaced by another module version is that version; one
// replaced by a directory (which the build info gives the version
// "(devel)") keeps its path, has no version and says where its code came
// from.
func compiled(m *debug.Module) goModule {
	r := m.Replace
	switch {
	case r == nil:
		return goModule{path: m.Path, version: m.Version, sum: m.Sum}
	case r.Version == "" || r.Version == "(devel)":
		return goModule{path: m.Path, comment: fmt.Sprintf("%s %s replaced by the directory %s", m.Path, m.Version, r.Path)}
	default:
		return goModule{path: r.Path, version: r.Version, sum: r.Sum, comment: fmt.Sprintf("replaces %s %s", m.Path, m.Version)}
	}
}

func (m goModule) purl() purl { return golangPurl(m.path, m.version, "") }

// goVersion splits a build info Go version ("go1.26.8", maybe followed by
// " X:experiment") into the version as written and the bare release
// ("1.26.8") that pkg:golang/stdlib purls carry, as syft writes them.
func goVersion(v string) (full, release string) {
	full, _, _ = strings.Cut(strings.TrimSpace(v), " ")
	return full, strings.TrimPrefix(full, "go")
}

// stdlibPurl is the Go toolchain's standard library at goVer.
func stdlibPurl(goVer string) purl {
	_, rel := goVersion(goVer)
	return purl{Type: "golang", Name: "stdlib", Version: rel}
}

// mainVersion is the main module's version, "" for a build from a checkout
// ("(devel)").
func mainVersion(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "(devel)" {
		return v
	}
	return ""
}

// binaryPurl is the purl of a binary's main package: the main module at
// its version, with the package's directory as subpath.
func binaryPurl(bi *debug.BuildInfo) purl {
	sub := ""
	if rest, ok := strings.CutPrefix(bi.Path, bi.Main.Path+"/"); ok && bi.Main.Path != "" {
		sub = rest
	}
	modPath := bi.Main.Path
	if modPath == "" {
		modPath = bi.Path
	}
	return golangPurl(modPath, mainVersion(bi), sub)
}
