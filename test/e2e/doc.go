// Package e2e proves helperbuild end to end against the real components operators use: the
// CNCF distribution registry (plain, and TLS with htpasswd), containerd with runc, skopeo,
// umoci and QEMU user-mode emulation.
//
// The tests are behind the build tag e2e and need root. Run them with
//
//	make e2e
//
// which is scripts/install-test-deps.sh followed by
// go test -tags e2e -count=1 -timeout 20m -v ./test/e2e/.
//
// TestMain builds helperbuild once, starts two registries, a private containerd and the
// binfmt_misc QEMU handlers, builds a multi-arch busybox base image from Debian's
// busybox-static packages and pushes it; every test then drives the helperbuild binary as
// an operator would and checks the result with an independent client. Everything started
// is stopped again by PID, also when a test fails or panics. See README.md.
package e2e
