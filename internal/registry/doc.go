// Package registry is where helperbuild's registry traffic is set up, read
// and written: the transport stack every run uses (per-host TLS from
// imageref.Options, retries, counting the bytes sent for a context that
// carries a counter: WithCounter, CarryCounter), the reads of references
// (Read), of manifests by digest and of referrers, a release's writes
// (Session), and the explanation of a registry's failures with the way out
// (Explain).
//
// It is the one package that builds HTTP requests or clients for
// registries (internal/depcheck's registryIO rule): Raw's manifest PUT and
// GET and referrers-API probe, CheckPush's upload start, Reader's referrers
// and images for signature checks and index's copies (Attached), and a
// release's writes (Session: blobs,
// images and indexes by digest and tags through ggcr's pusher, manifest
// HEADs and .sig reads through one puller). publish writes only through a
// Session made from the Options WithRetries returns, so its pushes share
// the stack.
package registry
