#!/bin/sh
# stress-test.sh: run the tests of the packages with concurrency the way a
# shared CI runner runs them, with every core busy: one busy loop per core
# beside `go test -race -count=3`. A test that depends on timing (a sleep to
# order events, a deadline a loaded machine misses) fails here. Exits
# non-zero when any test fails.
#
#   scripts/stress-test.sh                  the packages below
#   scripts/stress-test.sh -run TestX       extra `go test` flags
#   scripts/stress-test.sh -run Node -count=50
#                                           verify --nodes (a 5-platform index
#                                           included), 50 times in a row
#
# On a machine shared with other heavy runs, take the lock first:
#   flock /tmp/helperbuild-heavy.lock scripts/stress-test.sh
# The busy loops and the tests are stopped by PID when it ends or is
# interrupted.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
packages="./cmd/helperbuild ./internal/progress ./internal/retry ./internal/imageref ./internal/registry ./internal/release ./internal/build ./internal/merge ./internal/publish ./internal/sign ./internal/join ./internal/sandbox ./internal/verify ./internal/layer ./internal/crossbuild"
cores=$(getconf _NPROCESSORS_ONLN)

loops=""
tests=""
cleanup() {
	# The tests run in a session of their own: stop go test and the test
	# binaries it started together.
	[ -n "$tests" ] && kill -TERM "-$tests" 2>/dev/null || true
	for pid in $loops; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in $loops $tests; do
		wait "$pid" 2>/dev/null || true
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

i=0
while [ "$i" -lt "$cores" ]; do
	(while :; do :; done) &
	loops="$loops $!"
	i=$((i + 1))
done
echo "stress-test: $cores busy loops (pids$loops) beside go test -race -count=3 $packages $*"

cd "$root"
start=$(date +%s)
# shellcheck disable=SC2086 # the package list is split on purpose
setsid go test -race -count=3 -timeout 30m "$@" $packages &
tests=$!
status=0
wait "$tests" || status=$?
tests=""
if [ "$status" -eq 0 ]; then
	echo "stress-test: PASS in $(($(date +%s) - start)) s under $cores busy loops"
else
	echo "stress-test: FAIL (go test exit $status)" >&2
fi
exit "$status"
