package elfcheck

import (
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// GoBuild is the part of a Go binary's embedded build information that
// decides where it runs. Empty fields were not recorded.
type GoBuild struct {
	GoVersion  string // "go1.26.8"
	GOOS       string
	GOARCH     string
	GOARM      string // "7", or with a float mode: "7,softfloat"
	GOAMD64    string // "v1" ... "v4"
	CGOEnabled string // "0", "1" or ""
	Path       string // main package path
}

// GoInfo returns the build information of the Go ELF executable in r.
// ok is false, with a nil error, for an ELF file that is not a Go binary (no
// .go.buildinfo section). Input that is not ELF is an error wrapping
// [ErrNotELF].
func GoInfo(r io.ReaderAt) (*GoBuild, bool, error) {
	if _, err := readHeader(r); err != nil {
		return nil, false, err
	}
	bi, err := buildinfo.Read(r)
	if err != nil {
		// debug/buildinfo does not export "not a Go executable"; a Go ELF
		// binary always has a .go.buildinfo section, so its absence decides.
		if f, ferr := elf.NewFile(r); ferr == nil && f.Section(".go.buildinfo") == nil {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("Go build info: %w", err)
	}
	return GoBuildOf(bi), true, nil
}

// GoBuildOf is the part of bi that decides where a Go binary runs, of any
// executable format (internal/pecheck reads Windows binaries with it).
func GoBuildOf(bi *buildinfo.BuildInfo) *GoBuild {
	g := &GoBuild{GoVersion: bi.GoVersion, Path: bi.Path}
	for _, s := range bi.Settings {
		switch s.Key {
		case "GOOS":
			g.GOOS = s.Value
		case "GOARCH":
			g.GOARCH = s.Value
		case "GOARM":
			g.GOARM = s.Value
		case "GOAMD64":
			g.GOAMD64 = s.Value
		case "CGO_ENABLED":
			g.CGOEnabled = s.Value
		}
	}
	return g
}

// Platform is the platform info was built for: GOARM=6 is arm/v6, GOARM=7
// arm/v7, GOAMD64=v1 plain amd64, GOAMD64=v3 amd64/v3. Settings that were not
// recorded leave their field empty.
func (g *GoBuild) Platform() v1.Platform {
	return platform.FromGoBuild(g.GOOS, g.GOARCH, g.GOARM, g.GOAMD64)
}

// settings prints the recorded settings that select a platform.
func (g *GoBuild) settings() string {
	var s []string
	for _, kv := range [][2]string{{"GOOS", g.GOOS}, {"GOARCH", g.GOARCH}, {"GOARM", g.GOARM}, {"GOAMD64", g.GOAMD64}} {
		if kv[1] != "" {
			s = append(s, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(s, " ")
}

// CheckGo compares the build settings in info with p: GOOS and GOARCH, GOARM
// with the arm variant (5, 6, 7 <-> v5, v6, v7; linux/arm means v7) and
// GOAMD64 with the amd64 variant (v1 <-> no variant, v2-v4 <-> the same
// variant). A setting the binary did not record is not compared. A mismatch
// is a one-line *MismatchError such as
// "binary is a Go build for linux/arm/v6 (GOOS=linux GOARCH=arm GOARM=6), not linux/arm/v7".
func CheckGo(info *GoBuild, p v1.Platform) error {
	if info == nil {
		return fmt.Errorf("no Go build info to compare with %s", platform.Format(p))
	}
	want := platform.Normalize(p)
	got := info.Platform()
	ok := (got.OS == "" || got.OS == want.OS) && (got.Architecture == "" || got.Architecture == want.Architecture)
	switch {
	case !ok:
	case want.Architecture == "arm" && info.GOARM != "":
		ok = got.Variant == want.Variant
	case want.Architecture == "amd64" && info.GOAMD64 != "":
		ok = got.Variant == want.Variant
	}
	if ok {
		return nil
	}
	found := fmt.Sprintf("a Go build (%s)", info.settings())
	if got.OS != "" && got.Architecture != "" {
		found = fmt.Sprintf("a Go build for %s (%s)", platform.Format(got), info.settings())
	}
	return &MismatchError{Want: want, Got: got, Found: found}
}
