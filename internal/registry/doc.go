// Package registry is where helperbuild's registry traffic is set up and
// read: the transport stack every run uses (per-host TLS, retries, byte
// counting), the reads of references (Read), of manifests by digest and of
// referrers.
//
// The writes of a release (blobs, manifests, tags) are publish's; they go
// through the Options WithRetries returns, so they share the stack.
package registry
