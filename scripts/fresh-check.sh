#!/bin/sh
# fresh-check.sh: run the README's two commands, `make demo` and `make test`, as a new user
# would on a fresh Debian 12 machine, and print how long each step took.
#
# The machine is a Debian 12 (bookworm) root made by debootstrap from the Debian mirror: what
# Debian installs by default (priorities required and important) plus what the README's
# commands presuppose (git to clone, make, ca-certificates for the Go module proxy), with the
# mirror's bookworm, bookworm-updates and bookworm-security suites as a fresh install has them.
# Into it go a clean clone of this repository's HEAD (committed work only) and the Go toolchain
# that runs this script (its GOROOT, at /usr/local/go as go.dev installs it). Nothing else:
# no Go build or module cache, none of the test tools.
#
# The commands run in a mount and PID namespace of their own whose root is pivoted to the new
# root (a chroot alone would refuse the user namespaces --run's sandbox needs), with a fresh
# /proc, and /sys and /dev bound from the host; the network and binfmt_misc are the host's
# (the suite registers its QEMU handlers there and removes them again). Package installs do not
# start daemons (policy-rc.d, as in any chroot); the suite starts its own on 127.0.0.1.
# Every mount is made inside that namespace and every process runs in that PID namespace, so
# both end with it; on exit or interrupt the script kills the namespace's first process (by
# PID) and removes the root.
#
# Usage (root): scripts/fresh-check.sh [MAKE-TARGET...]   (default: demo test)
#
# The debootstrapped root is cached as a tarball in $HELPERBUILD_FRESH_CACHE (default
# /var/cache/helperbuild-fresh), outside the repository; delete it to start from nothing.
# DEBIAN_MIRROR (default http://deb.debian.org/debian) names the mirror; KEEP_ROOT=1 keeps the
# root (path printed) for a look afterwards.
set -eu

log() { printf 'fresh-check: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, mount namespaces)"
for tool in debootstrap unshare git go tar; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (apt-get install debootstrap util-linux git; Go from go.dev)"
done

targets=${*:-demo test}
repo=$(git rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse HEAD)
goroot=$(go env GOROOT)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
cache=${HELPERBUILD_FRESH_CACHE:-/var/cache/helperbuild-fresh}
include=git,make,ca-certificates
tarball=$cache/bookworm-$(dpkg --print-architecture)-$(echo "$include" | tr , -).tar.gz

# seconds formats a duration in seconds as 1m04s.
seconds() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

work=$(mktemp -d /var/tmp/helperbuild-fresh.XXXXXX)
root=$work/root
ns_pid=""
cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$ns_pid" ] && kill -0 "$ns_pid" 2>/dev/null; then
		# unshare --kill-child takes the namespace's PID 1, and with it every process in it.
		log "stopping the namespace (unshare, PID $ns_pid)"
		kill -KILL "$ns_pid" 2>/dev/null || true
		wait "$ns_pid" 2>/dev/null || true
	fi
	# Every mount was made in the namespace; a leak here would be a bug in this script.
	if grep -q " $work/" /proc/self/mountinfo; then
		log "mounts under $work are left on the host:"
		grep " $work/" /proc/self/mountinfo >&2
		rc=1
	elif [ "${KEEP_ROOT:-}" = 1 ]; then
		log "root kept in $root"
	else
		rm -rf "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

start=$(date +%s)
step_start=$start
step() {
	now=$(date +%s)
	log "$1: $(seconds $((now - step_start)))"
	step_start=$now
}

# --- the Debian root --------------------------------------------------------------------------
mkdir -p "$root"
if [ -r "$tarball" ]; then
	log "unpacking the cached root $tarball"
	tar -xzf "$tarball" -C "$root"
	step "root from the cache"
else
	log "debootstrap bookworm from $mirror (with $include)"
	debootstrap --include="$include" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		die "debootstrap failed; its log: $(tail -n 20 "$work/debootstrap.log")"
	cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security_mirror bookworm-security main
EOF
	rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
	mkdir -p "$cache"
	tar -czf "$tarball.tmp" -C "$root" . && mv "$tarball.tmp" "$tarball"
	step "debootstrap (cached as $tarball)"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/hosts "$root/etc/hosts"
# The network is the host's, and so are the certificate authorities it needs: a network that
# intercepts TLS (as some CI and sandboxed machines do) has its CA in the host's bundle.
# They are added to the root's own (update-ca-certificates), and Node (npm) is pointed at the
# result when the host points it at its bundle.
host_bundle=/etc/ssl/certs/ca-certificates.crt
node_ca=""
if [ -r "$host_bundle" ]; then
	mkdir -p "$root/usr/local/share/ca-certificates"
	cp "$host_bundle" "$root/usr/local/share/ca-certificates/fresh-check-host.crt"
	chroot "$root" update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates failed in the root"
	[ -z "${NODE_EXTRA_CA_CERTS:-}" ] || node_ca=NODE_EXTRA_CA_CERTS=$host_bundle
fi
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"

# --- the clone and Go -------------------------------------------------------------------------
git clone -q --no-hardlinks "$repo" "$root/root/helperbuild"
git -C "$root/root/helperbuild" checkout -q --detach "$commit"
mkdir -p "$root/usr/local"
cp -a "$goroot" "$root/usr/local/go"
step "clone of $(git -C "$repo" rev-parse --short HEAD) and Go $(go env GOVERSION) copied in"

# --- the README's commands, inside ------------------------------------------------------------
# The inner script runs as the namespace's PID 1: it makes the root a mount point, mounts
# /proc, /sys and /dev, pivots into it and runs each make target with a login-like environment.
inner='
set -eu
root=$1
node_ca=$2
shift 2
mount --make-rprivate /
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
cd "$root"
mkdir -p .oldroot
pivot_root . .oldroot
umount -l /.oldroot
rmdir /.oldroot
exec /usr/sbin/chroot . /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 $node_ca \
	PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	/bin/sh -c "
cd /root/helperbuild
failed=0
for target in \"\$@\"; do
	t0=\$(date +%s)
	if make \"\$target\"; then result=passed; else result=FAILED; failed=1; fi
	t=\$((\$(date +%s) - t0))
	printf \"fresh-check: make %s: %s in %dm%02ds\\n\" \"\$target\" \$result \$((t / 60)) \$((t % 60)) >&2
done
exit \$failed
" sh "$@"
'
log "running make $targets in the fresh root (commit $commit)"
set +e
# shellcheck disable=SC2086 # the targets are words
unshare --mount --pid --fork --kill-child=SIGKILL --propagation private sh -c "$inner" sh "$root" "$node_ca" $targets &
ns_pid=$!
wait "$ns_pid"
rc=$?
ns_pid=""
set -e
step "make $targets"
log "total: $(seconds $(($(date +%s) - start)))"
[ "$rc" -eq 0 ] || die "a command failed in the fresh root (exit $rc)"
log "make $targets passed on the first try"
