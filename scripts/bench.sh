#!/bin/sh
# bench.sh: measure helperbuild against the bare go builds it runs (the floor)
# and against ko, on this machine, idle and again beside one busy loop per
# CPU, and print one table of medians and ratios (issues 7, 17 and 41).
# `make bench` runs it.
#
#   scripts/bench.sh                 5 measured runs per step after 1 warm-up
#   QUICK=1 scripts/bench.sh         3 runs (development)
#   scripts/bench.sh -busy 0         idle only (about half the time)
#   scripts/bench.sh -workloads example -memory=false -ko none   (any hbbench flag)
#   scripts/bench.sh -ab /path/to/other/helperbuild   also push with another build (A/B)
#   scripts/bench.sh -busy-session shared   busy loops in hbbench's session (the bench before issue 41)
#   scripts/bench.sh -registry-delay 30ms   hold each registry request 30 ms (a network round trip)
#
# It needs docker-registry (scripts/install-test-deps.sh installs it) and the
# Go module proxy (ko is installed into a temporary GOBIN, never into go.mod).
# Everything runs against 127.0.0.1; the registry, the proxy and every
# command it starts are stopped by PID when it ends or is interrupted.
# The program is bench/cmd/hbbench (its own module); the workloads are
# examples/gitlab-runner, bench/bigmain/mid (12 MB, on a busybox-like base
# with an apk database), bench/bigmain/held (11 MB, same base: issue 41's
# held-out-like program) and bench/bigmain (48 MB). Each helperbuild run is
# split into phases (whole run, per platform) from its progress events, with
# its own CPU time beside its go builds', and its CPU by process (itself, go,
# compile, link, the registry, hbbench) per span of the run. The floor is
# timed under the same instrument (hbbench runs its go builds in a child of
# its own, sampled like helperbuild), so the sampling costs both sides alike.
# The busy loops run each in a session of its own (an autogroup of its own:
# another user's load); -busy-session shared puts them in hbbench's. The
# first run compiles the big workload for five architectures (minutes);
# later runs take about 15 min, of which the busy rounds take about half.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
runs=5
[ "${QUICK:-}" = 1 ] && runs=3

command -v docker-registry >/dev/null 2>&1 || {
	echo "bench.sh: docker-registry is missing; run scripts/install-test-deps.sh (as root)" >&2
	exit 1
}

tmp=$(mktemp -d)
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true # hbbench stops what it started, then exits
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

(cd "$root/bench" && CGO_ENABLED=0 go build -o "$tmp/hbbench" ./cmd/hbbench)
# Run in the background and wait, so a signal reaches the trap and hbbench is
# stopped by its PID (hbbench itself stops its registry and its commands).
"$tmp/hbbench" -repo "$root" -runs "$runs" "$@" &
pid=$!
status=0
wait "$pid" || status=$?
pid=""
exit "$status"
