package release

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/progress"
)

// Request is a build or push run as the command gathered it from flags and
// environment; nothing below reads either. Prepare checks it, Execute runs
// it. Errors in what the user gave are *InputError and name the flag.
type Request struct {
	// Command names the run on the start line ("helperbuild push").
	Command string
	// Push publishes to a registry; otherwise the run writes Output.
	Push bool
	// ByDigest is a CI job's share of a release: no tag, a part file.
	ByDigest bool
	// Package is the Go main package of config-free mode; "" reads the
	// recipe (Config, default helperbuild.yaml).
	Package Package
	Config  string
	// Images selects images of the recipe; nil: all.
	Images []string
	// Platforms are --platforms (nil: not given); AllPlatforms is
	// --platforms all.
	Platforms    []v1.Platform
	AllPlatforms bool
	// ReleasePlatforms are the whole release's platforms of a by-digest
	// job (--release-platforms); nil: the recipe's, or Platforms.
	ReleasePlatforms []v1.Platform
	// Tags are --tag: references or layout names (config-free), or a tag
	// every image also gets (recipe).
	Tags []string
	// Output is build's oci:DIR or oci-archive:FILE.
	Output string
	// Repo is --repo; RepoFromEnv the prefix CI gives (CI_REGISTRY_IMAGE),
	// used when Repo is empty.
	Repo, RepoFromEnv string
	// PartFile is where a by-digest job writes its part.
	PartFile string
	// Given is the release metadata the flags and CI gave; what is empty
	// is asked of git.
	Given Given
	// CI is what GitLab CI says about the job; zero outside CI.
	CI CI
	// Env is the environment go build starts from and {{.Env.NAME}} reads.
	Env []string
	// Registry says how registries are reached.
	Registry Registry
	// Jobs bounds parallel compiles and layer writes; CompressionLevel is
	// the gzip level of new layers.
	Jobs, CompressionLevel int
	// CacheDir keeps binaries, layers and base images between runs ("" keeps none);
	// CacheDirFrom names where it came from, for the error when it cannot
	// be created ("--cache-dir DIR").
	CacheDir, CacheDirFrom string
	// Attest is --attest, --provenance and --attest-dir.
	Attest AttestRequest
	// Run is --run: start each platform's image of an image whose recipe
	// names a contract as GitLab starts it, before anything is published
	// (build.Options.Run).
	Run bool
	// Outputs are the files the run writes besides its summary.
	Outputs Outputs
	// HelperbuildVersion is this program's version (part files, provenance).
	HelperbuildVersion string
	// Sign signs every index and platform manifest before any tag moves
	// (push --sign); nil signs nothing.
	Sign *SignRequest
}

// Package is config-free mode's input: a Go main package put at
// /usr/bin/<name> on top of Base.
type Package struct {
	Main, Base, BinaryName, Ldflags string
	// DefaultBase says Base was not given: Prepare chose DefaultBase.
	DefaultBase bool
}

// Given is the release metadata as flags, else CI variables, gave it.
type Given struct {
	Version, Revision, Branch, Source string
	// Epoch is SOURCE_DATE_EPOCH or CI_COMMIT_TIMESTAMP as given
	// (EpochFrom names which); "" takes the commit's time.
	Epoch, EpochFrom string
}

// CI is the GitLab CI job a run is in, from its predefined variables.
type CI struct {
	JobID, JobName, JobURL  string
	ServerURL, ProjectPath  string
	RunnerID, RunnerVersion string
	CommitTag, CommitBranch string
	ProjectDir              string // the source root; "" is the working directory
}

// Registry says how a run reaches registries.
type Registry struct {
	Keychain  authn.Keychain
	Insecure  []string
	UserAgent string
	Retries   int
	Timeout   time.Duration
}

// AttestRequest is --attest (index, referrers, none), --provenance (min,
// max) and --attest-dir.
type AttestRequest struct {
	Mode, Provenance, Dir string
}

// The --attest values, for the command's default and completions (the
// command imports release, not product).
const (
	AttestIndex     = product.AttestIndex
	AttestReferrers = product.AttestReferrers
	AttestNone      = product.AttestNone
)

// Outputs are the files a run writes besides its summary; "" is a file not
// asked for. Every one is written whole or not at all (outfile).
type Outputs struct {
	Metadata, Dotenv, AttestDir string
}

// Observer is where a run reports as it goes: details and warnings (with
// -v), the retry transport's warnings, and progress events. Nil fields
// discard.
type Observer struct {
	Logger, RetryLogger *slog.Logger
	Progress            progress.Sink
}

func (o Observer) defaults() Observer {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RetryLogger == nil {
		o.RetryLogger = o.Logger
	}
	if o.Progress == nil {
		o.Progress = progress.Discard
	}
	return o
}

func (o *Observer) phase(kind progress.Kind, name, message string) {
	o.Progress.Event(progress.Event{Kind: kind, Phase: name, Message: message})
}

// inputf is an *InputError: a usage error the command exits 2 for.
func inputf(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}

// attest is the job as a provenance names its builder.
func (c CI) attest() attest.CI {
	return attest.CI{ServerURL: c.ServerURL, ProjectPath: c.ProjectPath, JobURL: c.JobURL, RunnerID: c.RunnerID, RunnerVersion: c.RunnerVersion}
}
