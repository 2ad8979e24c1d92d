#!/usr/bin/env bash
# Runs a command with TMPDIR set to a fresh directory, and fails when the
# command left anything there: the tests clean up what they make (t.TempDir),
# and so does helperbuild. Usage: scripts/tmpdir-clean.sh COMMAND [ARG...]
set -euo pipefail
dir=$(mktemp -d "${TMPDIR:-/tmp}/tmpdir-clean.XXXXXX")
rc=0
TMPDIR=$dir "$@" || rc=$?
if [ -n "$(find "$dir" -mindepth 1 -maxdepth 1)" ]; then
	echo "tmpdir-clean: left in TMPDIR by \`$*\`:" >&2
	find "$dir" -mindepth 1 -maxdepth 2 | sed "s|^$dir/|  |" >&2
	if [ "$rc" -eq 0 ]; then rc=1; fi
fi
rm -rf "$dir"
exit "$rc"
