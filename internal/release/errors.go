package release

import (
	"errors"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/build"
	"github.com/helperbuild/helperbuild/internal/execerr"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/layer"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/registry"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// InputError is a run that failed because of what the user wrote (a flag,
// a Dockerfile instruction, an ARG without a value), not because something
// went wrong while running; the command reports it as a usage error.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// asInput is err as an *InputError when the build says the user's input
// caused it (a *build.InputError anywhere in its chain), else err.
func asInput(err error) error {
	var be *build.InputError
	if errors.As(err, &be) {
		return &InputError{err}
	}
	return err
}

// DefaultCompressionLevel is the gzip level of new layers unless the
// request says otherwise.
const DefaultCompressionLevel = layer.DefaultLevel

// TagsOf says whether err is a publish that failed in its tag phase, and
// which tags it wrote, which it may have written (a PUT that got no
// answer, e.g. interrupted in flight) and which not: a run that failed
// earlier wrote none.
func TagsOf(err error) (written, maybe, notWritten []string, ok bool) {
	var terr *publish.TagError
	if !errors.As(err, &terr) {
		return nil, nil, nil, false
	}
	return terr.Written, terr.MayBeWritten, terr.NotWritten, true
}

// TagState says what a run that failed in its tag phase left behind, or
// "" when it wrote (or may have written) no tag: "tagged A; may have been
// written: B; not tagged: C; run again to write the rest". A tag whose PUT
// was in flight (interrupted) may have been written: the registry may
// have stored it before the answer was lost.
func TagState(err error) string {
	written, maybe, notWritten, ok := TagsOf(err)
	if !ok || len(written)+len(maybe) == 0 {
		return ""
	}
	msg := "tagged " + strings.Join(written, " ")
	if len(written) == 0 {
		msg = "no tag written for sure"
	}
	if len(maybe) > 0 {
		msg += "; may have been written: " + strings.Join(maybe, " ")
	}
	if len(notWritten) > 0 {
		msg += "; not tagged: " + strings.Join(notWritten, " ")
	}
	return msg + "; run again to write the rest"
}

// Tagged is TagsOf's ok.
func Tagged(err error) bool {
	_, _, _, ok := TagsOf(err)
	return ok
}

// UnauthorizedHost is the registry host that refused err's credentials
// (401 or 403), if that is what err is.
func UnauthorizedHost(err error) (string, bool) {
	var re *registry.RegistryError
	if errors.As(err, &re) && re.Kind == registry.Unauthorized {
		return re.Host, true
	}
	return "", false
}

// NotFound reports whether err is a reference its registry or layout
// does not hold (a 404 for a manifest, a layout without that entry).
func NotFound(err error) bool { return errors.Is(err, imageref.ErrNotFound) }

// DefaultProvenance is the provenance detail unless the request says
// otherwise: min, nothing run-specific.
const DefaultProvenance = string(attest.ProvenanceMin)

// KeepsLines reports whether err's message is lines to print as they are:
// a child process's failure (go build's output, then the way out).
func KeepsLines(err error) bool { return execerr.Is(err) }

// DockerConfigFiles say where the Docker config and Podman's auth file are.
type DockerConfigFiles = registry.DockerConfigFiles

// DockerKeychain is the Docker config keychain with its files found from f,
// never the process's environment.
func DockerKeychain(f DockerConfigFiles) authn.Keychain { return registry.DockerKeychain(f) }

// CheckFailures are the failed checks err carries, one per image (a build
// or push gathers every image's; verify reports one reference).
func CheckFailures(err error) []*verify.FailedError {
	var out []*verify.FailedError
	var walk func(error)
	walk = func(e error) {
		if fe, ok := e.(*verify.FailedError); ok {
			out = append(out, fe)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			if c := u.Unwrap(); c != nil {
				walk(c)
			}
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// WriteCheckFailures prints the failed checks err carries (see
// CheckFailures) as verify prints them: each image's table, a blank line
// between them; nothing when there are none.
func WriteCheckFailures(w io.Writer, err error) error {
	for k, failed := range CheckFailures(err) {
		if k > 0 {
			if _, werr := io.WriteString(w, "\n"); werr != nil {
				return werr
			}
		}
		if werr := verify.WriteTable(w, failed.Name, failed.Report); werr != nil {
			return werr
		}
	}
	return nil
}
