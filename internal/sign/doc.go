// Package sign makes and checks cosign-compatible signatures of manifests by digest, with Sigstore's Go libraries.
//
// A Signer holds one key for a run: a cosign key pair or a plain PKCS#8
// ECDSA key, or an ephemeral key certified by Fulcio for an OIDC token
// (keyless), with an optional Rekor entry. It signs a manifest digest in
// either of cosign's formats: a Sigstore bundle v0.3 (a DSSE envelope of an
// in-toto statement, predicate https://sigstore.dev/cosign/sign/v1) wrapped
// as an OCI 1.1 referrer, or cosign's legacy simple-signing layer for the
// sha256-<hex>.sig tag or for its OCI 1.1 referrer form (with the Rekor
// entry as cosign's annotation). Where those go is publish's business. A Verifier
// checks both formats against a public key or a certificate identity and
// a trusted root, offline; VerifyDigest reads the signatures through a
// Registry (internal/registry's Reader), so nothing here talks to a
// registry itself. Its HTTP is Rekor's and Fulcio's. Nothing here reads
// the environment.
package sign
