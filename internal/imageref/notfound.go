package imageref

import "errors"

// ErrNotFound is what a reference its registry or layout does not hold
// is (errors.Is): a 404 for its manifest, no such layout entry. The
// command gives it an exit code of its own.
var ErrNotFound = errors.New("not found")

// notFound marks a layout's missing entry as ErrNotFound.
type notFound struct{ err error }

func (n notFound) Error() string        { return n.err.Error() }
func (n notFound) Unwrap() error        { return n.err }
func (n notFound) Is(target error) bool { return target == ErrNotFound }

// MarkNotFound marks err as ErrNotFound (errors.Is), its message unchanged:
// a layout's missing entry here, a registry's 404 for a manifest a user
// named in internal/registry.
func MarkNotFound(err error) error { return notFound{err} }
