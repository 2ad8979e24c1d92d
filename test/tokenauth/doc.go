// Package tokenauth is a GitLab-like token service for tests: its realm,
// /jwt/auth, trades Basic credentials for short-lived JWTs scoped per
// repository that CNCF distribution's `auth: token` accepts.
//
// Users are GitLab's kinds: an administrator, a CI job (user gitlab-ci-token,
// password the job token: push and pull on its project, pull elsewhere) and a
// deploy token (pull only). Tokens carry an x5c chain to a test CA the
// registry trusts (rootcertbundle). The lifetime is configurable down to a
// second; since distribution adds 60 s of leeway to a token's expiry, the
// service writes exp that much earlier so the registry refuses a token after
// the configured lifetime. ExpireAfter is a gate for a proxy in front of the
// registry that expires a token after a number of requests instead of
// seconds, so every run meets expiry whatever the machine's load. Every
// answer of the realm and the gate is logged (Log, Stats), so a test counts
// renewals instead of timing anything.
//
// The service listens where the test serves Handler (loopback only) and
// never stores a password or token in its log.
package tokenauth
