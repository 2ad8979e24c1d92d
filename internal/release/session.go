package release

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/retry"
)

// session is what one run holds open, whichever command it is: a
// temporary directory, a blob store in it (or the cache's kept bases), and
// the registry options on the run's one transport stack (per-host TLS,
// retries, byte counting). Every command opens exactly one (depcheck holds
// that no other place builds these); Close removes the directory and
// reports the retries and the --insecure-registry hosts no request reached.
type session struct {
	tmp      string
	images   imageref.Options
	rt       *retry.Transport
	logger   *slog.Logger
	insecure []string
}

// openSession opens a run's session for reg: a temporary directory
// helperbuild-<what>-*, a blob store in it or, when keep is not "", the
// base blobs kept in keep/bases (see imageref.KeepBlobs); retries are
// logged on retryLog, the summary of them on logger (nil: discarded).
func openSession(reg Registry, what, keep string, logger, retryLog *slog.Logger) (*session, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tmp, err := os.MkdirTemp("", "helperbuild-"+what+"-")
	if err != nil {
		return nil, err
	}
	o := imageref.Options{Keychain: reg.Keychain, Insecure: reg.Insecure, UserAgent: reg.UserAgent, TempDir: tmp}
	// Every base blob is fetched once per run, however many platforms,
	// images and checks read it; with a cache, once per cache (base
	// layers, manifests and configs: the tag is still asked every run).
	o.Blobs = imageref.NewBlobs(filepath.Join(tmp, "blobs"))
	if keep != "" {
		o.Blobs = imageref.KeepBlobs(filepath.Join(keep, "bases"))
	}
	images, rt, err := registry.WithRetries(o, reg.retries(), retryLog)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	return &session{tmp: tmp, images: images, rt: rt, logger: logger, insecure: reg.Insecure}, nil
}

// registryDestination is the registry destination of a release published
// to placed (images named in names' order), signing it as signing says
// (the zero Signing: unsigned).
func (s *session) registryDestination(placed publish.Naming, names []string, signing publish.Signing) (*publish.Registry, error) {
	reg, err := publish.NewRegistry(placed, names, s.images, s.logger)
	if err != nil {
		return nil, err
	}
	reg.SignWith(signing)
	return reg, nil
}

// Close removes the session's directory and reports its retries and the
// --insecure-registry values that matched no host it reached.
func (s *session) Close() {
	registry.WarnUnusedInsecure(s.logger, s.rt, s.insecure)
	registry.ReportRetries(s.logger, s.rt)
	_ = os.RemoveAll(s.tmp)
}

func (r Registry) retries() registry.Retries {
	return registry.Retries{Retries: r.Retries, Timeout: r.Timeout}
}
