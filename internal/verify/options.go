package verify

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/sandbox"
)

// Contracts Options.Contract accepts.
const (
	ContractNone   = ""
	ContractHelper = "helper"
	ContractRunner = "runner"
)

// Options say what to verify. The zero value checks that the reference is an
// index whose entries are image manifests with matching configs and ELF
// files of the right architecture in the image's own layers.
type Options struct {
	// Platforms are the platforms expected in the index, exactly (variants
	// included). Nil means no coverage expectation beyond "is an index".
	Platforms []v1.Platform
	// Contract is "", "helper" or "runner": the GitLab image contract to check.
	Contract string
	// AllFiles checks every ELF executable of the flattened filesystem, not
	// only those in the image's own layers.
	AllFiles bool
	// Run runs GitLab Runner's binaries among the Go programs the own
	// layers added (gitlab-runner, gitlab-runner-helper) and those in
	// Versions with --version, and /bin/sh -c true, each in a sandbox
	// (internal/sandbox: namespaces, an overlay of the unpacked image as
	// root, no network, rlimits), under qemu-user inside it (natively for
	// amd64 on an amd64 host); the other Go programs are listed, not run.
	// With a Contract, it also starts the image as GitLab does. The binary
	// must call sandbox.Init first in main.
	Run bool
	// Versions are image paths of programs the caller built (a release's
	// binaries), which Run also asks --version when the own layers hold
	// them as Go programs.
	Versions []string
	// Nodes are cluster nodes (see ParseNodes); each without an image in the
	// index is a problem.
	Nodes []Node
	// TempDir is where Run unpacks each platform's rootfs (TempDir/<n>) and
	// where ELF files are spooled; the caller removes it. Required with Run;
	// otherwise "" means os.TempDir.
	TempDir string
	// Qemu finds the qemu-user binary for a qemu architecture name
	// ("aarch64"); default: exec.LookPath("qemu-<arch>-static").
	Qemu func(arch string) (string, error)
	// Binfmt returns the binfmt_misc entry (name, magic, mask) of the
	// qemu-user emulator for a qemu architecture name, for the start-up
	// runs of foreign platforms (Run with a Contract); default: read from
	// qemu-user-static's /usr/lib/binfmt.d/qemu-<arch>.conf.
	Binfmt func(arch string) (sandbox.Binfmt, error)
	// HostArch is the GOARCH of the machine running the checks; amd64 images
	// run natively when it is "amd64". Default: runtime.GOARCH.
	HostArch string
	// RunTimeout bounds each program Run starts; 0 means 30s.
	RunTimeout time.Duration
	// RunLimits are the sandbox's resource limits; zero fields take
	// sandbox's defaults, but CPU time defaults to RunTimeout.
	RunLimits sandbox.Limits
	// Sandbox starts the sandboxes; nil means a zero sandbox.Runner.
	Sandbox *sandbox.Runner
	// UnpackMaxBytes bounds the contents of the files Run unpacks per
	// platform (a larger image is a failed run check); 0 means 4 GiB.
	UnpackMaxBytes int64
	// UnpackMaxFiles bounds the entries Run unpacks per platform; 0 means
	// 500,000.
	UnpackMaxFiles int
	// LayersMaxBytes bounds, for every check, what a platform's layers
	// decompress to together (more is a failed arch check, and nothing of
	// the files is checked); it also bounds each ELF file spooled to
	// TempDir. 0 means 8 GiB: layers also hold what later ones replace.
	LayersMaxBytes int64
	// LayersMaxEntries bounds the entries of a platform's layers together
	// (the metadata tree's size), as LayersMaxBytes; 0 means 1,000,000.
	LayersMaxEntries int
	// Attestations checks each platform image's SBOM and provenance (see
	// docs/attestations.md): both there, in the index (BuildKit's
	// attestation manifests) or else among Referrers, both about the
	// platform manifest, the SBOM's Go modules per binary equal to the
	// binary's build info, the provenance's base images equal to the
	// manifest's org.opencontainers.image.base.digest.
	Attestations bool
	// Referrers, if set, lists the manifests whose subject is digest
	// (OCI 1.1 referrers, from the API or the fallback tag), for
	// Attestations when the index holds none for an image.
	Referrers func(ctx context.Context, digest v1.Hash) ([]v1.Image, error)
	// SourceFile, if set, reads the file at path (slash-separated,
	// relative to the repository's root) in the source commit, for
	// Attestations: the provenance's recipe must be there with its digest.
	// nil, or an error that is ErrNoCommit: the recipe is not looked up
	// (the check says so).
	SourceFile func(ctx context.Context, commit, path string) ([]byte, error)
	// Signature, if set, checks the signature of the manifest digest
	// (the index's and each platform image's): ok with a summary, or not
	// with the reason; the error is for failures to read the signatures.
	Signature func(ctx context.Context, digest v1.Hash) (ok bool, reason string, err error)
	// Jobs bounds how many platforms are verified at once; 0 means 1.
	Jobs int
	// Checked, when set, returns the per-platform checks already run on the
	// image manifest with this digest, listed under p (see Platform); Index
	// uses them instead of reading that image. ok false: check it here.
	Checked func(digest v1.Hash, p v1.Platform) (checks []Check, ok bool)
}

func (o Options) withDefaults() (Options, error) {
	switch o.Contract {
	case ContractNone, ContractHelper, ContractRunner:
	default:
		return o, fmt.Errorf("contract %q: want %q, %q or none", o.Contract, ContractHelper, ContractRunner)
	}
	if o.Platforms != nil {
		norm := make([]v1.Platform, len(o.Platforms))
		for i, p := range o.Platforms {
			norm[i] = platform.Normalize(p)
		}
		o.Platforms = norm
	}
	if o.Jobs < 0 {
		return o, fmt.Errorf("jobs %d: want 1 or more", o.Jobs)
	}
	if o.Jobs == 0 {
		o.Jobs = 1
	}
	if o.Run && o.TempDir == "" {
		return o, errors.New("run needs a temporary directory to unpack the images into")
	}
	if o.Qemu == nil {
		o.Qemu = func(arch string) (string, error) { return exec.LookPath("qemu-" + arch + "-static") }
	}
	if o.Binfmt == nil {
		o.Binfmt = qemuBinfmt
	}
	if o.HostArch == "" {
		o.HostArch = runtime.GOARCH
	}
	if o.RunTimeout < 0 {
		return o, fmt.Errorf("run timeout %s: want a positive duration", o.RunTimeout)
	}
	if o.RunTimeout == 0 {
		o.RunTimeout = 30 * time.Second
	}
	if o.RunLimits.CPU == 0 {
		o.RunLimits.CPU = o.RunTimeout
	}
	if o.Sandbox == nil {
		o.Sandbox = &sandbox.Runner{}
	}
	if o.UnpackMaxBytes < 0 || o.UnpackMaxFiles < 0 {
		return o, fmt.Errorf("unpack limits %d bytes, %d files: want positive numbers", o.UnpackMaxBytes, o.UnpackMaxFiles)
	}
	if o.UnpackMaxBytes == 0 {
		o.UnpackMaxBytes = 4 << 30
	}
	if o.UnpackMaxFiles == 0 {
		o.UnpackMaxFiles = 500_000
	}
	if o.LayersMaxBytes < 0 || o.LayersMaxEntries < 0 {
		return o, fmt.Errorf("layer limits %d bytes, %d entries: want positive numbers", o.LayersMaxBytes, o.LayersMaxEntries)
	}
	if o.LayersMaxBytes == 0 {
		o.LayersMaxBytes = 8 << 30
	}
	if o.LayersMaxEntries == 0 {
		o.LayersMaxEntries = 1_000_000
	}
	return o, nil
}
