#!/bin/sh
# measure-fanout.sh: what a release costs on one runner vs fanned out over one runner per
# platform (docs/gitlab-ci.md), from a cold Go build cache every time:
#
#   one job     helperbuild push, all platforms, one fresh GOCACHE
#   per job     helperbuild push --by-digest --platforms P, one after the other, each with
#               its own fresh GOCACHE (what each of N runners does at the same time)
#   merge       helperbuild merge of those parts
#
# and prints the one job's time, the per-platform times with their sum and max, the merge,
# and max + merge: the wall time a user with one runner per platform waits (plus the CI
# system's own scheduling and artifact transfers). It also checks that the merge published
# the digest the one job did.
#
#   scripts/measure-fanout.sh            (the bundled example, examples/gitlab-runner)
#
# Run it under the heavy lock on a shared machine: flock /tmp/helperbuild-heavy.lock ...
# It starts docker-registry on 127.0.0.1 (stopped by PID at the end) and keeps the Go module
# cache (downloads are not compilation); every Go build cache and helperbuild cache it uses
# is a fresh temporary directory, removed at the end.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
platforms="linux/amd64 linux/arm64 linux/arm/v7 linux/ppc64le linux/s390x"
list=$(echo "$platforms" | tr ' ' ,)
[ $# -eq 0 ] || {
	echo "usage: scripts/measure-fanout.sh (no arguments: the bundled example)" >&2
	exit 2
}

log() { printf 'measure-fanout: %s\n' "$*" >&2; }
command -v docker-registry >/dev/null 2>&1 || {
	log "docker-registry is missing; run scripts/install-test-deps.sh (as root)"
	exit 1
}

tmp=$(mktemp -d)
registry_pid=""
cleanup() {
	if [ -n "$registry_pid" ]; then
		kill "$registry_pid" 2>/dev/null || true
		wait "$registry_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$tmp/helperbuild" ./cmd/helperbuild)
hb=$tmp/helperbuild

# The registry, on a free port of 127.0.0.1.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$tmp/registry"
cat >"$tmp/registry.yml" <<EOF
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $tmp/registry}, delete: {enabled: true}}
http: {addr: 127.0.0.1:$port, secret: measure-fanout}
EOF
docker-registry serve "$tmp/registry.yml" >"$tmp/registry.log" 2>&1 &
registry_pid=$!
registry=127.0.0.1:$port
tries=0
until curl -fs -o /dev/null "http://$registry/v2/"; do
	tries=$((tries + 1))
	[ "$tries" -lt 200 ] || {
		log "registry did not start:"
		cat "$tmp/registry.log" >&2
		exit 1
	}
	sleep 0.05
done

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# timed NAME CMD...: runs CMD in $dir with a fresh Go build cache and helperbuild cache and
# records its wall time in $tmp/times as "NAME SECONDS".
timed() {
	what=$1
	shift
	cold=$(mktemp -d "$tmp/cold.XXXXXX")
	start=$(now)
	(cd "$dir" && GOCACHE=$cold/go-build "$@" --cache-dir "$cold/helperbuild" >"$tmp/$what.log" 2>&1) || {
		log "$what failed:"
		tail -20 "$tmp/$what.log" >&2
		exit 1
	}
	end=$(now)
	rm -rf "$cold"
	echo "$what $(secs "$start" "$end")" >>"$tmp/times"
	log "$what: $(secs "$start" "$end") s"
}

digest_of() { # the index digest of image $1 in metadata file $2
	python3 -c 'import json,sys
print(next(i["digest"] for i in json.load(open(sys.argv[2]))["images"] if i["name"] == sys.argv[1]))' "$1" "$2"
}

dir=$root/examples/gitlab-runner
repo=$registry/example
: >"$tmp/times"
log "example: load before: $(uptime)"
timed one-job "$hb" push --insecure-registry "$registry" --platforms "$list" \
	--config helperbuild.yaml --repo "$repo/single" --metadata-file "$tmp/single.json"
mkdir -p "$tmp/parts-example"
for p in $platforms; do
	slug=$(echo "$p" | tr / -)
	timed "$slug" "$hb" push --insecure-registry "$registry" --by-digest --platforms "$p" \
		--config helperbuild.yaml --repo "$repo/fanout" --part-file "$tmp/parts-example/$slug.json"
done
start=$(now)
(cd "$dir" && "$hb" merge --insecure-registry "$registry" --platforms "$list" --config helperbuild.yaml \
	--metadata-file "$tmp/merged.json" "$tmp/parts-example" >"$tmp/merge.log" 2>&1) || {
	log "merge failed:"
	cat "$tmp/merge.log" >&2
	exit 1
}
end=$(now)
echo "merge $(secs "$start" "$end")" >>"$tmp/times"
log "example: load after: $(uptime)"

for image in gitlab-runner-helper gitlab-runner; do
	single=$(digest_of "$image" "$tmp/single.json")
	merged=$(digest_of "$image" "$tmp/merged.json")
	[ "$single" = "$merged" ] || {
		log "$image: the merge published $merged, the one job $single"
		exit 1
	}
done

awk -v same="both images: the merge published the one job's index digest" '
	{ t[$1] = $2 }
	$1 ~ /^linux-/ { n++; sum += $2; if ($2 > max) max = $2; per = per sprintf("| %s | %.1f s |\n", $1, $2) }
	END {
		printf "\nexample: %s\n\n| step | wall time |\n|---|---|\n", same
		printf "| one job, 5 platforms | %.1f s |\n", t["one-job"]
		printf "%s", per
		printf "| per-platform jobs: sum | %.1f s |\n| per-platform jobs: max | %.1f s |\n", sum, max
		printf "| merge | %.1f s |\n| 5 runners: max + merge | %.1f s |\n", t["merge"], max + t["merge"]
	}' "$tmp/times"
