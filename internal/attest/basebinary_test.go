package attest

import (
	"os"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spdx/tools-golang/spdx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// scanBase flattens layers once with a BaseScan and returns the binaries
// the flattened base still holds and the scan.
func scanBase(t *testing.T, layers ...v1.Layer) ([]Binary, *BaseScan) {
	t.Helper()
	once := make([]v1.Layer, len(layers))
	for i, l := range layers {
		once[i] = &onceLayer{Layer: l}
	}
	s := &BaseScan{}
	fs, err := rootfs.FlattenEach(t.Context(), once, s.Visit)
	require.NoError(t, err, "one pass over each layer")
	return s.Binaries(fs), s
}

// A base's Go binaries are found in the flattening pass: executable ones
// only, under every name a hard link gives them, not when a later layer
// deletes or replaces them, and not non-Go ELF files.
func TestBaseScan(t *testing.T) {
	hello, err := os.ReadFile(buildHello(t))
	require.NoError(t, err)
	notGo, err := os.ReadFile("/proc/self/exe")
	require.NoError(t, err)
	// The test binary is itself Go; a C program stands for a non-Go ELF.
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if b, err := os.ReadFile(p); err == nil {
			notGo = b
			break
		}
	}
	require.NotContains(t, string(notGo), "\xff Go buildinf:", "need a non-Go ELF program")

	bins, s := scanBase(t,
		tartest.Layer(t,
			tartest.Dir("usr/bin/", 0o755),
			tartest.File("usr/bin/git-lfs", 0o755, hello),
			tartest.Hardlink("usr/bin/git-lfs-link", "usr/bin/git-lfs"),
			tartest.File("usr/bin/true", 0o755, notGo),
			tartest.File("usr/share/doc/hello", 0o644, hello),
			tartest.File("usr/bin/replaced", 0o755, hello),
			tartest.File("usr/bin/deleted", 0o755, hello),
			tartest.File("usr/bin/script", 0o755, []byte("#!/bin/sh\n")),
		),
		tartest.Layer(t,
			tartest.File("usr/bin/replaced", 0o755, []byte("#!/bin/sh\n")),
			tartest.File("usr/bin/.wh.deleted", 0o644, nil),
		),
	)
	var paths []string
	for _, b := range bins {
		paths = append(paths, b.Path)
		assert.Equal(t, "example.com/hello", b.Info.Path)
		assert.Zero(t, b.SHA256, "a base's binaries are not hashed")
	}
	assert.Equal(t, []string{"/usr/bin/git-lfs", "/usr/bin/git-lfs-link"}, paths)
	assert.Empty(t, s.Skipped())
}

// The SBOM lists a base's Go binaries with their modules, contained in the
// base package; without a base they are an error.
func TestSBOMBaseBinaries(t *testing.T) {
	b, err := OpenBinary("/usr/bin/git-lfs", buildHello(t))
	require.NoError(t, err)
	spec := SBOMSpec{
		Image:        testImage(t, linuxV7),
		Base:         Base{Ref: "registry.example.com/base/runner-helper:alpine", Digest: hash(t, "base arm v7")},
		BaseBinaries: []Binary{b},
		BaseSkipped:  []string{"/usr/bin/huge"},
		Created:      epoch,
	}
	out, err := SBOM(spec)
	require.NoError(t, err)
	d := parseSPDX(t, out)
	var base *spdx.Package
	for _, p := range d.Packages {
		if p.PackageName == spec.Base.Ref {
			base = p
		}
	}
	require.NotNil(t, base)
	assert.Contains(t, base.PackageComment, "/usr/bin/huge")
	bin := spdxPkg(t, d, "pkg:golang/example.com/hello")
	assert.Equal(t, "/usr/bin/git-lfs", bin.PackageFileName)
	rels := related(d)
	assert.Contains(t, rels, string(base.PackageSPDXIdentifier)+" CONTAINS "+string(bin.PackageSPDXIdentifier))
	sync := spdxPkg(t, d, "pkg:golang/golang.org/x/sync@v0.25.0")
	assert.Contains(t, rels, string(bin.PackageSPDXIdentifier)+" DEPENDS_ON "+string(sync.PackageSPDXIdentifier))

	// The image's own binary at another path is a package of its own.
	own := b
	own.Path = "/usr/bin/gitlab-runner-helper"
	spec.Binaries = []Binary{own}
	out, err = SBOM(spec)
	require.NoError(t, err)
	d = parseSPDX(t, out)
	var files []string
	for _, p := range d.Packages {
		if p.PrimaryPackagePurpose == "APPLICATION" {
			files = append(files, p.PackageFileName)
		}
	}
	assert.ElementsMatch(t, []string{"/usr/bin/git-lfs", "/usr/bin/gitlab-runner-helper"}, files)

	spec.Base = Base{}
	_, err = SBOM(spec)
	assert.ErrorContains(t, err, "base binaries without a base")
}
