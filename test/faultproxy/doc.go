// Package faultproxy is a deterministic, fault-injecting reverse proxy for
// tests: it listens on 127.0.0.1, forwards to a loopback registry and breaks
// a chosen fraction of requests in chosen ways — a 5xx status, 429 with
// Retry-After, a connection reset in the middle of a body, a response cut
// short of its Content-Length, a slow response.
//
// Determinism: whether a request is faulted, and how, depends only on the
// seed, the request's key (method and path, with the session id of a blob
// upload replaced by "*" and the query string ignored) and how many requests
// with that key came before. Concurrency therefore does not change the
// schedule of any key; only which of several concurrent uploads gets the
// nth "PATCH .../blobs/uploads/*" decision can vary. The same seed against
// the same request sequence gives the same Stats().Injected.
//
// Transient faults (the default) hit a key at most MaxPerKey times, so a
// client that retries at least that often always gets through; Persistent
// faults hit every matching request, forever.
//
// Options.Every replaces the seeded schedule with a rate limit: every nth
// eligible request, in arrival order, gets the fault. Stats also counts the
// target's answers by status (401s of an auth: token registry) and the body
// bytes of requests it accepted.
//
// Only loopback targets are accepted; the proxy never reaches further.
package faultproxy
