// Package execerr makes the failure of a child process (go build, go list,
// git) an error a person reads: what ran, the first lines of its output and
// how many more there were, and the way out when the output shows a known
// cause (a module the proxy refuses, a missing go.sum entry).
//
// Its message has several lines; callers print it as is, never joined.
package execerr
