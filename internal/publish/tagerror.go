package publish

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/helperbuild/helperbuild/internal/registry"
)

// TagError is a failure in the tag phase: some tags are written, the
// failed one may be (its PUT got no answer: the registry may have stored
// it), the rest are not. Running again writes the rest.
type TagError struct {
	Tag          string   // the tag that failed
	Written      []string // full references, in order
	MayBeWritten []string // the failed tag, when its PUT got no answer
	NotWritten   []string // the failed tag (if answered) and those after it
	Err          error
}

// newTagError is the failure err of the PUT of tag (rest[0]), after
// written: an answer from the registry (an error status) means it was
// not written; none (interrupted, connection lost) means it may have been.
func newTagError(tag string, written, rest []string, err error) *TagError {
	e := &TagError{Tag: tag, Written: slices.Clone(written), NotWritten: rest, Err: registry.Explain(err)}
	var answered *transport.Error
	if !errors.As(err, &answered) && len(rest) > 0 {
		e.MayBeWritten, e.NotWritten = rest[:1], rest[1:]
	}
	return e
}

func (e *TagError) Error() string {
	maybe := ""
	if len(e.MayBeWritten) > 0 {
		maybe = fmt.Sprintf("; may have been written (no answer to its PUT): [%s]", strings.Join(e.MayBeWritten, " "))
	}
	return fmt.Sprintf("tag %s: %v; written: [%s]%s; not written: [%s]; run again to write the rest",
		e.Tag, e.Err, strings.Join(e.Written, " "), maybe, strings.Join(e.NotWritten, " "))
}

func (e *TagError) Unwrap() error { return e.Err }
