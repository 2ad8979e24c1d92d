package build

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/progress"
)

// Options configures Build. release fills it from the command's request
// and the session it opened (Images, TempDir); nothing here reads the
// environment or opens a session.
type Options struct {
	// Env is the environment `go build` starts from (os.Environ()).
	Env []string
	// Go is the go command; default "go".
	Go string
	// Jobs bounds parallel compiles and layer writes; must be > 0.
	Jobs int
	// CompressionLevel is the gzip level of new layers, 1 (fastest) to 9
	// (smallest); 0 means layer.DefaultLevel.
	CompressionLevel int
	// Meta is the release metadata; Meta.Created is the epoch.
	Meta manifest.Meta
	// Images says how to reach registries and holds the credentials.
	Images imageref.Options
	// TempDir holds the run's temporary files; the caller removes it.
	TempDir string
	// CacheDir keeps binaries, layers and base images between runs; "" keeps them in TempDir.
	CacheDir string
	// BuildPlatform is the host, for BUILDPLATFORM and friends.
	BuildPlatform v1.Platform
	// Preflight, if set, runs beside the reading of the base images (push
	// checks its permission there) and, when the plan names its platforms,
	// beside the compiles, which show nothing (no line, no stage, no
	// layer) until it and the reading have passed; its error ends the
	// build, stopping them.
	Preflight func(ctx context.Context) error
	// OnImage, if set, runs right after each platform's image is assembled
	// and has passed its checks, while other platforms may still compile (push uses it to send blobs
	// and the manifest by digest early, moving no tag); with attestations on, it also takes, beside that image, each
	// artifact carrying the platform's statements (an attestation manifest
	// or the referrers), whose blobs then go up before the publish phase.
	// Its error fails the build.
	OnImage func(ctx context.Context, image string, p v1.Platform, img v1.Image) error
	// OnLayer, if set, takes the new layers of the platforms the release
	// waits on (assembled once nothing compiles) while they are written,
	// each in a goroutine of its own, so push uploads them beside the
	// compression. l's Compressed stream ends only once the platform has
	// passed its checks, and fails otherwise; until Write has finished,
	// l.Digest wraps go-containerregistry's stream.ErrNotComputed (see
	// layer.Stream). OnImage runs after the platform's OnLayer calls have
	// returned; an error of either fails the build.
	OnLayer func(ctx context.Context, image string, p v1.Platform, l v1.Layer) error
	// Run starts each platform's image of an image whose recipe names a
	// contract in a sandbox as GitLab starts it (verify.Options.Run with
	// the contract), before any of it is published; the binary must call
	// sandbox.Init first in main.
	Run bool
	// Attest says whether and where each platform image's SBOM and
	// provenance go; the zero value writes none.
	Attest Attest
	// Logger receives the details (every layer, check and upload); nil
	// discards them.
	Logger *slog.Logger
	// Progress receives the release's events: the resolve and build
	// phases, each image × platform's stages (see progress.Stage) and the
	// bytes its uploads send (OnImage and OnLayer get a context carrying
	// a progress counter); nil discards them.
	Progress progress.Sink

	hooks *hooks // tests only
}

func (o *Options) check() error {
	if o.Jobs <= 0 {
		return fmt.Errorf("jobs must be at least 1, got %d", o.Jobs)
	}
	if o.TempDir == "" {
		return fmt.Errorf("no temporary directory")
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = progress.Discard
	}
	if o.BuildPlatform.OS == "" {
		o.BuildPlatform = v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	}
	return nil
}

// InputError is a build that failed because of what the user wrote (a
// Dockerfile instruction, an ARG without a value, a Windows entry without
// a Windows base), not because something went wrong while building;
// release hands it on as its own InputError, a usage error.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputf is an *InputError.
func inputf(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}
