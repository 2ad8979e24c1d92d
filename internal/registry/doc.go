// Package registry is where helperbuild's registry traffic is set up and
// read: the transport stack every run uses (per-host TLS from
// imageref.Options, retries, byte counting), the reads of references
// (Read), of manifests by digest and of referrers, and the explanation of
// a registry's failures with the way out (Explain).
//
// It is the one package that builds HTTP requests or clients for
// registries (internal/depcheck's registryIO rule): Raw's manifest PUT and
// GET and referrers-API probe, CheckPush's upload start, Reader's referrers
// and images for signature checks. The pushes of a release (blobs,
// manifests through ggcr's pusher) are still publish's; they go through the
// Options WithRetries returns, so they share the stack.
package registry
