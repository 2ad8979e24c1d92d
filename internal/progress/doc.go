// Package progress is how a release tells a person (or a machine) what it
// is doing. The release sends typed events (a stage change of one image ×
// platform, a phase start or end, bytes uploaded, a logged detail, a retry
// or warning) to a Sink; a Reporter stamps them with an injected clock and
// hands them, one at a time, to a Renderer: TTY (a live table redrawn in
// place, never wider than the terminal), Plain (one line per milestone,
// GitLab CI's collapsible sections when asked), JSON (one event per line)
// or Quiet (warnings and errors only when the run fails); ForMode picks
// one by --progress's name. NewLogger is the redacted key=value logger of
// a run that has no renderer.
//
// Promise: no renderer reads a clock, the environment or the terminal
// itself; the caller injects the clock and the width, and drives the TTY's
// redraw ticker, so tests decide every instant. Digests are shortened to
// 12 hex digits, no file path is printed except in a logged detail
// (verbose), and no URL keeps its query (Redact: upload locations carry
// the session's state there) in any message, field or error shown. Retries, warnings and errors are printed by every renderer,
// Quiet only when the run failed.
//
// progress only renders: the bytes uploaded arrive as KindBytes events,
// counted as they go out by the registry's transport stack
// (registry.WithCounter), never by reading the data a second time; typo
// suggestions are platform.Nearest.
package progress
