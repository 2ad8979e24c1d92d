package main

import (
	"context"
	"errors"
	"strings"

	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/release"
)

// errorLine is the one line Run prints for err: with the way out where
// helperbuild knows it, nothing of a URL past its path (blob upload
// locations carry the session's state in their query), no line breaks;
// a child process's failure (execerr) keeps its lines: its output, then the
// way out.
func errorLine(ctx context.Context, env Env, err error) string {
	msg := err.Error()
	if ctx.Err() != nil {
		msg = interrupted(err)
	} else {
		if host, ok := release.UnauthorizedHost(err); ok {
			msg += "; " + credentialSource(env, host)
		}
	}
	if release.KeepsLines(err) && ctx.Err() == nil {
		return strings.TrimSpace(progress.Redact(msg))
	}
	return progress.JoinLines(progress.Redact(msg), " | ")
}

// interrupted says what an interrupted run left behind: which tags were
// written, if any, never the request it was in.
func interrupted(err error) string {
	if tags := release.TagState(err); tags != "" {
		return "interrupted: " + tags
	}
	var nothing nothingTagged
	if errors.As(err, &nothing) || release.Tagged(err) { // a tag phase that wrote none
		return "interrupted: nothing was tagged"
	}
	return "interrupted"
}

// nothingTagged marks the failure of a build or push that wrote no tag (a
// layout entry is a tag too).
type nothingTagged struct{ err error }

func (n nothingTagged) Error() string { return n.err.Error() }
func (n nothingTagged) Unwrap() error { return n.err }
