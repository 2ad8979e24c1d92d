#!/usr/bin/env bash
# docs-check.sh: run every command of docs/operators.md against the bundled example.
#
# A command is a line starting with "$ " inside a ```sh block (a trailing "\" continues
# it). It must exit 0, or the code its trailing "# exits N" comment names, and print
# every line that follows it in the block (up to the next command; "…" stands for any
# text, such as a digest), each somewhere in its stdout and stderr. The example
# (examples/gitlab-runner) is first pushed as v17.10.0 to a docker-registry started here
# on 127.0.0.1 (stopped again by its PID); in each command registry.example.com/group is
# that registry, helperbuild is bin/helperbuild, and `kubectl get nodes -o json` is a
# mixed cluster's node list (docs/testdata/nodes.json: one amd64 and two arm64 nodes).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
doc=${1:-$root/docs/operators.md}
hb=$root/bin/helperbuild
[ -x "$hb" ] || { echo "docs-check: $hb missing: run make build" >&2; exit 1; }
for tool in docker-registry curl ss; do
	command -v "$tool" >/dev/null || { echo "docs-check: $tool missing: run scripts/install-test-deps.sh" >&2; exit 1; }
done

work=$(mktemp -d)
registry_pid=
cleanup() {
	if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# A free port on 127.0.0.1, and a registry listening only there.
port=
for _ in $(seq 1 50); do
	p=$((20000 + RANDOM % 20000))
	if [ -z "$(ss -Htln "( sport = :$p )")" ]; then port=$p; break; fi
done
[ -n "$port" ] || { echo "docs-check: no free port" >&2; exit 1; }
host=127.0.0.1:$port
cat >"$work/registry.yml" <<YML
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $work/registry}}
http: {addr: $host, secret: docs-check}
YML
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for i in $(seq 1 200); do
	curl -fsS -o /dev/null "http://$host/v2/" 2>/dev/null && break
	[ "$i" -lt 200 ] || { echo "docs-check: registry on $host did not start:" >&2; cat "$work/registry.log" >&2; exit 1; }
	sleep 0.05
done

# The bundled example, released as v17.10.0.
(cd "$root/examples/gitlab-runner" && "$hb" push --repo "$host/group" --version v17.10.0 \
	--revision 0123456789abcdef0123456789abcdef01234567 --branch 17-10-stable >"$work/push.out" 2>"$work/push.err") ||
	{ echo "docs-check: pushing the example failed:" >&2; cat "$work/push.err" >&2; exit 1; }

# The blocks ("B<tab>line number") and their commands ("C<tab>command", continuations
# joined), each followed by the lines it must print ("O<tab>line").
awk '
	/^```/ { if (inblock) { inblock = 0 } else if ($0 ~ /^```(sh|console)$/) { inblock = 1; print "B\t" NR }; next }
	!inblock { next }
	cont != "" { line = cont $0; cont = ""; if (line ~ /\\$/) { cont = substr(line, 1, length(line) - 1); next }; print "C\t" line; next }
	/^\$ / {
		line = substr($0, 3)
		if (line ~ /\\$/) { cont = substr(line, 1, length(line) - 1); next }
		print "C\t" line; next
	}
	/[^ ]/ { print "O\t" $0 }
' "$doc" >"$work/commands"

subst() {
	local s=${1//registry.example.com\/group/$host\/group}
	printf '%s' "${s//kubectl get nodes -o json/cat \"$root\/docs\/testdata\/nodes.json\"}"
}

# check runs one command and compares its exit code and output with the document's.
n=0
failed=0
mkdir "$work/run"
check() {
	local cmd=$1 want=0 got=0 problems=""
	shift
	n=$((n + 1))
	if [[ $cmd =~ \#\ exits\ ([0-9]+) ]]; then want=${BASH_REMATCH[1]}; fi
	(cd "$work/run" && PATH="$root/bin:$PATH" bash -c "$(subst "$cmd")") >"$work/out" 2>&1 || got=$?
	[ "$got" -eq "$want" ] || problems="exit $got, want $want"
	local line
	for line in "$@"; do
		if ! WANT=$(subst "$line") perl -ne 'BEGIN { $p = join(".*", map { quotemeta } split(/\x{e2}\x{80}\x{a6}/, $ENV{WANT}, -1)) } $f = 1 if /$p/; END { exit !$f }' "$work/out"; then
			problems="$problems${problems:+; }no line matching: $line"
		fi
	done
	if [ -z "$problems" ]; then
		printf 'ok    %s\n' "$cmd"
	else
		printf 'FAIL  %s\n      %s; it printed:\n' "$cmd" "$problems"
		sed 's/^/      | /' "$work/out"
		failed=$((failed + 1))
	fi
}

cmd=
expect=()
while IFS=$'\t' read -r kind text; do
	case $kind in
	B | C)
		[ -z "$cmd" ] || check "$cmd" "${expect[@]}"
		cmd=
		expect=()
		[ "$kind" = B ] && block=$text || cmd=$text
		;;
	O)
		if [ -z "$cmd" ]; then
			printf 'FAIL  the block at line %s of %s has output before any command: %s\n' "$block" "${doc#"$root"/}" "$text"
			failed=$((failed + 1))
		fi
		expect+=("$text")
		;;
	esac
done <"$work/commands"
[ -z "$cmd" ] || check "$cmd" "${expect[@]}"

if [ "$n" -eq 0 ]; then
	echo "docs-check: no command found in $doc" >&2
	exit 1
fi
if [ "$failed" -eq 0 ]; then
	echo "docs-check: all $n commands of ${doc#"$root"/} ran as documented"
else
	echo "docs-check: $failed problems in ${doc#"$root"/} ($n commands)"
fi
[ "$failed" -eq 0 ]
