//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The base image every test builds on: Debian's busybox-static for each of the five
// platforms, so the shell and tools in an image really are of that image's architecture.
// It is built deterministically (fixed timestamps, fixed order), so its digest is the same
// on every run and machine with the same .debs.

// busyboxApplets become symlinks to /bin/busybox in /bin. Add what new tests need.
var busyboxApplets = []string{"sh", "ash", "cat", "true", "false", "echo", "ls", "mkdir", "rm",
	"tee", "uname", "id", "env", "sleep", "grep", "sed"}

const (
	baseRepo = "base/busybox" // repository of the base image in both registries
	baseTag  = "1"
	// imagePATH is the PATH GitLab's helper image has (gitlab-image-contract.md).
	imagePATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// baseEpoch is the timestamp of every file and of the configs in the base image.
var baseEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// baseImage is the multi-arch busybox image in an OCI layout directory.
type baseImage struct {
	Layout string  // OCI layout directory; helperbuild reads it as oci:Layout:1
	Digest v1.Hash // digest of the image index (the same after pushing with skopeo)
	Index  v1.IndexManifest
}

// ociRef is the base as a helperbuild/skopeo reference to the layout directory.
func (b *baseImage) ociRef() string { return "oci:" + b.Layout + ":" + baseTag }

// busyboxCacheDir is where scripts/install-test-deps.sh keeps the busybox-static .debs.
func busyboxCacheDir() string {
	if dir := os.Getenv("HELPERBUILD_E2E_CACHE"); dir != "" {
		return filepath.Join(dir, "busybox")
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home := os.Getenv("HOME")
		if home == "" {
			home = "/root" // as the script does
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "helperbuild-e2e", "busybox")
}

// buildBaseImage writes the five-platform busybox index to the OCI layout dir, tagged
// baseTag. The index is assembled by hand: ggcr's mutate.AppendManifests would add an
// artifactType to each entry, which plain images must not carry.
func buildBaseImage(ctx context.Context, debDir, dir string) (*baseImage, error) {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return nil, err
	}
	index := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	for _, tg := range targets {
		img, err := busyboxImage(ctx, debDir, tg)
		if err != nil {
			return nil, fmt.Errorf("base image for %s: %w", tg.Platform, err)
		}
		if err := p.WriteImage(img); err != nil {
			return nil, fmt.Errorf("write base image for %s: %w", tg.Platform, err)
		}
		desc, err := describe(img)
		if err != nil {
			return nil, err
		}
		desc.Platform = &v1.Platform{OS: tg.OS, Architecture: tg.Arch, Variant: tg.Variant}
		index.Manifests = append(index.Manifests, desc)
	}
	raw, err := json.Marshal(index)
	if err != nil {
		return nil, err
	}
	digest, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if err := p.WriteBlob(digest, io.NopCloser(bytes.NewReader(raw))); err != nil {
		return nil, err
	}
	err = p.AppendDescriptor(v1.Descriptor{
		MediaType:   types.OCIImageIndex,
		Digest:      digest,
		Size:        size,
		Annotations: map[string]string{"org.opencontainers.image.ref.name": baseTag},
	})
	if err != nil {
		return nil, err
	}
	return &baseImage{Layout: dir, Digest: digest, Index: index}, nil
}

// describe returns the plain index entry for img: media type, digest and size only.
func describe(img v1.Image) (v1.Descriptor, error) {
	mt, err := img.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := img.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: digest, Size: size}, nil
}

// busyboxImage builds the single-platform OCI image for tg: one layer, and a config with
// the platform, PATH and CMD ["sh"].
func busyboxImage(ctx context.Context, debDir string, tg target) (v1.Image, error) {
	busybox, version, err := busyboxFromDeb(ctx, debDir, tg.DebArch)
	if err != nil {
		return nil, err
	}
	// A dpkg status file and an os-release, as a Debian base has them: the SBOM lists
	// the base's packages from them.
	status := "Package: busybox-static\nStatus: install ok installed\nPriority: optional\nSection: shells\n" +
		"Architecture: " + tg.DebArch + "\nSource: busybox\nVersion: " + version + "\n"
	layerTar, err := busyboxLayerTar(busybox, status)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: tg.Arch,
		OS:           tg.OS,
		Variant:      tg.Variant,
		Created:      v1.Time{Time: baseEpoch},
		Config:       v1.Config{Env: []string{imagePATH}, Cmd: []string{"sh"}},
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: baseEpoch},
			CreatedBy: "helperbuild e2e: busybox-static " + tg.DebArch,
		},
	})
}

// busyboxFromDeb returns /bin/busybox from the cached busybox-static .deb of debArch, and
// the package's version.
func busyboxFromDeb(ctx context.Context, debDir, debArch string) ([]byte, string, error) {
	debs, _ := filepath.Glob(filepath.Join(debDir, "busybox-static_*_"+debArch+".deb"))
	if len(debs) != 1 {
		return nil, "", fmt.Errorf("want one busybox-static .deb for %s in %s, found %d: run scripts/install-test-deps.sh",
			debArch, debDir, len(debs))
	}
	version, err := exec.CommandContext(ctx, "dpkg-deb", "--field", debs[0], "Version").Output()
	if err != nil {
		return nil, "", fmt.Errorf("dpkg-deb --field %s Version: %w", debs[0], err)
	}
	// dpkg-deb unpacks the data member (xz) for us; the tar it prints is read here.
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", debs[0])
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w: %s", debs[0], err, stderr.String())
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, "", fmt.Errorf("%s has no ./bin/busybox", debs[0])
		}
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", debs[0], err)
		}
		if hdr.Name == "./bin/busybox" && hdr.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			return data, strings.TrimSpace(string(version)), err
		}
	}
}

// busyboxLayerTar returns the uncompressed layer: /bin/busybox, its applet links, /usr/bin
// (where helperbuild puts binaries), /tmp, /etc/os-release and dpkg's status file holding
// status. Entries are sorted, parents first.
func busyboxLayerTar(busybox []byte, status string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	header := func(name string, typ byte, mode int64) *tar.Header {
		return &tar.Header{Name: name, Typeflag: typ, Mode: mode, ModTime: baseEpoch, Format: tar.FormatPAX}
	}
	entries := []*tar.Header{header("bin/", tar.TypeDir, 0o755)}
	file := header("bin/busybox", tar.TypeReg, 0o755)
	file.Size = int64(len(busybox))
	entries = append(entries, file)
	contents := map[*tar.Header][]byte{file: busybox}
	text := func(name, body string) {
		h := header(name, tar.TypeReg, 0o644)
		h.Size = int64(len(body))
		contents[h] = []byte(body)
		entries = append(entries, h)
	}
	for _, applet := range busyboxApplets {
		link := header("bin/"+applet, tar.TypeSymlink, 0o777)
		link.Linkname = "busybox"
		entries = append(entries, link)
	}
	entries = append(entries, header("etc/", tar.TypeDir, 0o755))
	text("etc/os-release", "ID=debian\nVERSION_ID=\"12\"\n")
	entries = append(entries, header("tmp/", tar.TypeDir, 0o1777), header("usr/", tar.TypeDir, 0o755),
		header("usr/bin/", tar.TypeDir, 0o755))
	envLink := header("usr/bin/env", tar.TypeSymlink, 0o777) // scripts use #!/usr/bin/env
	envLink.Linkname = "/bin/busybox"
	entries = append(entries, envLink, header("var/", tar.TypeDir, 0o755), header("var/lib/", tar.TypeDir, 0o755),
		header("var/lib/dpkg/", tar.TypeDir, 0o755))
	text("var/lib/dpkg/status", status)

	for _, hdr := range entries {
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(contents[hdr]); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pushBase copies the base index to r with skopeo (an independent client, so the suite's
// own base does not depend on helperbuild) and checks the digest survived the copy.
func pushBase(ctx context.Context, b *baseImage, r *registry) error {
	args := append([]string{"copy", "--all", "--quiet", "--preserve-digests"}, r.skopeoFlags("dest")...)
	args = append(args, b.ociRef(), "docker://"+r.ref(baseRepo+":"+baseTag))
	if out, err := exec.CommandContext(ctx, "skopeo", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("skopeo %v: %w: %s", args, err, out)
	}
	args = append([]string{"inspect", "--raw"}, r.skopeoFlags("")...)
	args = append(args, "docker://"+r.ref(baseRepo+":"+baseTag))
	raw, err := exec.CommandContext(ctx, "skopeo", args...).Output()
	if err != nil {
		return fmt.Errorf("skopeo %v: %w", args, err)
	}
	if got, _, _ := v1.SHA256(bytes.NewReader(raw)); got != b.Digest {
		return fmt.Errorf("base index in %s has digest %s after skopeo copy, want %s", r.Host, got, b.Digest)
	}
	return nil
}
