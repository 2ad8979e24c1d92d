#!/bin/sh
# install-test-deps.sh: install what the end-to-end suite (test/e2e) needs on Debian 12.
#
# Idempotent and fast (well under a second) when everything is already present:
#   1. the real components the suite drives: the CNCF distribution registry
#      (docker-registry), skopeo, containerd + ctr, runc, umoci, qemu-user-static
#      (with its binfmt_misc descriptions), htpasswd (apache2-utils), openssl and git;
#      regctl (go install, pinned) to read attestations back; CNCF distribution v3 (go install,
#      pinned, as distribution-v3), the second registry implementation;
#   2. .debs for amd64, arm64, armhf, ppc64el and s390x in a cache directory: busybox-static
#      (the suite builds its multi-arch base image from it) and the packages of a GitLab-like
#      base (internal/fixture/gitlabbase). Foreign architectures are added to dpkg only for the
#      download and removed again; nothing is installed from them.
#
# With the argument unit (make unit), only what the unit tests run on the host: qemu-user-static
# (the sandbox runs arm64 programs under it), gcc and libc6-dev (a dynamically linked cgo
# program), git. The unit tests fail, naming the package, when one is missing.
#
# With the argument gitlab-ci-local (make ci-e2e), also: Node.js and npm (Debian's, if there is
# no node yet), rsync and gitlab-ci-local 4.52.2 from npm, which run the GitLab CI template.
#
# With the argument trivy (make e2e-consumers), also: trivy v0.74.0 (go install, pinned, built as
# its release is: GOEXPERIMENT=jsonv2, CGO_ENABLED=0), which reads referrers-mode SBOMs. Not in
# make test's path: a cold build takes long (see README's development section).
#
# Run as root (apt-get). Cache directory, in this order:
#   $HELPERBUILD_E2E_CACHE, $XDG_CACHE_HOME/helperbuild-e2e, $HOME/.cache/helperbuild-e2e
# The Go suite uses the same rule (test/e2e/baseimage_test.go: busyboxCacheDir).
set -eu

cache_root=${HELPERBUILD_E2E_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/helperbuild-e2e}
busybox_dir=$cache_root/busybox
gitlab_base_dir=$cache_root/gitlab-base
# Debian architecture names; the suite maps them to OCI platforms.
busybox_arches="amd64 arm64 armhf ppc64el s390x"

log() { printf 'install-test-deps: %s\n' "$*" >&2; }

as_root() {
	if [ "$(id -u)" -ne 0 ]; then
		log "must run as root to $1 (apt-get, dpkg)"
		exit 1
	fi
}

# --- 0. the unit tests' tools (argument unit) --------------------------------------------
if [ "${1:-}" = unit ]; then
	[ $# -eq 1 ] || {
		log "unit takes no other argument"
		exit 2
	}
	unit_pkgs=""
	command -v qemu-aarch64-static >/dev/null 2>&1 || unit_pkgs="$unit_pkgs qemu-user-static"
	command -v gcc >/dev/null 2>&1 || unit_pkgs="$unit_pkgs gcc libc6-dev"
	[ -r /usr/include/stdio.h ] || unit_pkgs="$unit_pkgs libc6-dev"
	command -v git >/dev/null 2>&1 || unit_pkgs="$unit_pkgs git"
	[ -z "$unit_pkgs" ] && exit 0
	as_root "install:$unit_pkgs (make unit needs them)"
	log "installing:$unit_pkgs"
	apt-get update -qq || log "apt-get update reported errors; installing anyway"
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $unit_pkgs
	exit 0
fi

# --- 1. packages -------------------------------------------------------------------------
# command -> Debian package providing it
missing_pkgs=""
extra_pkgs="" # packages beyond the fixed list below (tools a minimal system may lack)
need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		missing_pkgs="$missing_pkgs $2"
	fi
}
need_extra() {
	if ! command -v "$1" >/dev/null 2>&1; then
		missing_pkgs="$missing_pkgs $2"
		extra_pkgs="$extra_pkgs $2"
	fi
}
need docker-registry docker-registry
need skopeo skopeo
need containerd containerd
need ctr containerd
need runc runc
need umoci umoci
need qemu-aarch64-static qemu-user-static
need htpasswd apache2-utils
need_extra openssl openssl
need_extra git git
need_extra tmux tmux # the terminal test (TestProgressOnATerminal)
need_extra curl curl # docs-check's readiness probe (not in a minimal Debian 12)
need_extra ss iproute2 # docs-check's free-port search
need_extra dpkg-deb dpkg
# binfmt_misc descriptions shipped by qemu-user-static (the suite registers them itself).
[ -r /usr/lib/binfmt.d/qemu-aarch64.conf ] || missing_pkgs="$missing_pkgs qemu-user-static"

apt_updated=""
if [ -n "$missing_pkgs" ]; then
	as_root "install:$missing_pkgs"
	log "installing:$missing_pkgs"
	# Not fatal: with a mirror in sync for one suite the install below may still succeed,
	# and if it does not, it says what is missing.
	apt-get update -qq || log "apt-get update reported errors; installing anyway"
	apt_updated=1
	# The full list, so a half-installed machine ends up like a fresh one.
	# shellcheck disable=SC2086 # word splitting of the extra packages is intended
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		docker-registry skopeo containerd runc umoci qemu-user-static apache2-utils $extra_pkgs
fi

# regctl reads attestations back (referrers, fallback tags) in the suite; from the Go
# module proxy, pinned, into /usr/local/bin (on every PATH the suite sees).
regctl_version=v0.11.7
if ! command -v regctl >/dev/null 2>&1; then
	as_root "install regctl $regctl_version into /usr/local/bin"
	log "installing regctl $regctl_version"
	GOBIN=/usr/local/bin CGO_ENABLED=0 go install "github.com/regclient/regclient/cmd/regctl@$regctl_version"
fi

# CNCF distribution v3 is the suite's second registry implementation (token auth with a
# GitLab-like token service, the OCI 1.1 referrers API; test/e2e/registries_test.go); Debian's
# docker-registry is 2.8. Pinned, from the Go module proxy (go install names it registry:
# built into a temporary GOBIN and installed as distribution-v3, beside docker-registry);
# kept when go version -m names this version.
distribution_version=v3.1.2
if ! { command -v distribution-v3 >/dev/null 2>&1 && go version -m "$(command -v distribution-v3)" | grep -q "^[[:space:]]*mod[[:space:]]*github.com/distribution/distribution/v3[[:space:]]*$distribution_version[[:space:]]"; }; then
	as_root "install distribution $distribution_version into /usr/local/bin"
	log "installing distribution $distribution_version as distribution-v3 (go install)"
	dist_gobin=$(mktemp -d)
	GOTOOLCHAIN=local GOBIN=$dist_gobin CGO_ENABLED=0 go install "github.com/distribution/distribution/v3/cmd/registry@$distribution_version"
	install -m 0755 "$dist_gobin/registry" /usr/local/bin/distribution-v3
	rm -rf "$dist_gobin"
fi

# buildx reads index-mode attestations as Docker users do (imagetools inspect, no daemon);
# pinned, from the Go module proxy (about 20 minutes of CPU on 2 cores, 95 MB).
buildx_version=v0.38.2
# (it prints v0.0.0+unknown as its version when built so: ask its build info instead)
if ! { command -v buildx >/dev/null 2>&1 && go version -m "$(command -v buildx)" | grep -q "^[[:space:]]*mod[[:space:]]*github.com/docker/buildx[[:space:]]*$buildx_version[[:space:]]"; }; then
	as_root "install buildx $buildx_version into /usr/local/bin"
	log "installing buildx $buildx_version (go install)"
	GOBIN=/usr/local/bin go install "github.com/docker/buildx/cmd/buildx@$buildx_version"
fi

# cosign checks helperbuild's signatures and signs images helperbuild verifies (TestSign*);
# pinned, built once into /usr/local/bin (about 13 minutes of CPU on 2 cores, 141 MB), and
# kept there: a cosign that already reports this version is not built again.
cosign_version=v3.1.3
if ! cosign version 2>/dev/null | grep -q "GitVersion: *$cosign_version\$\|GitVersion: *$cosign_version "; then
	as_root "install cosign $cosign_version into /usr/local/bin"
	log "installing cosign $cosign_version (go install; about 13 minutes of CPU)"
	GOTOOLCHAIN=local GOBIN=/usr/local/bin CGO_ENABLED=0 go install "github.com/sigstore/cosign/v3/cmd/cosign@$cosign_version"
fi

# --- trivy (opt-in, make e2e-consumers) -------------------------------------------------------
# trivy's --sbom-sources oci reads referrers-mode SBOMs (test/e2e/consumers_test.go); pinned, from
# the Go module proxy, built as trivy's goreleaser.yml builds it (it imports encoding/json/v2,
# which Go 1.26 has only with GOEXPERIMENT=jsonv2). Kept when go version -m names this version.
trivy_version=v0.74.0
install_trivy() {
	if command -v trivy >/dev/null 2>&1 && go version -m "$(command -v trivy)" | grep -q "^[[:space:]]*mod[[:space:]]*github.com/aquasecurity/trivy[[:space:]]*$trivy_version[[:space:]]"; then
		return 0
	fi
	as_root "install trivy $trivy_version into /usr/local/bin"
	log "installing trivy $trivy_version (go install; a cold build takes long, see README)"
	GOTOOLCHAIN=local GOEXPERIMENT=jsonv2 GOBIN=/usr/local/bin CGO_ENABLED=0 go install \
		-ldflags "-s -w -X github.com/aquasecurity/trivy/pkg/version/app.ver=${trivy_version#v}" \
		"github.com/aquasecurity/trivy/cmd/trivy@$trivy_version"
}

# --- gitlab-ci-local (opt-in) ----------------------------------------------------------------
# 4.52.2 is the last release that runs on Node 20 (later ones need Node 22); Debian 12's
# Node 18 runs it too.
gitlab_ci_local_version=4.52.2
for arg in "$@"; do
	case $arg in
	gitlab-ci-local) ;;
	trivy)
		install_trivy
		continue
		;;
	*)
		log "unknown argument $arg; the arguments are gitlab-ci-local and trivy, or unit alone"
		exit 2
		;;
	esac
	ci_pkgs=""
	command -v node >/dev/null 2>&1 || ci_pkgs="$ci_pkgs nodejs npm"
	command -v node >/dev/null 2>&1 && ! command -v npm >/dev/null 2>&1 && ci_pkgs="$ci_pkgs npm"
	command -v rsync >/dev/null 2>&1 || ci_pkgs="$ci_pkgs rsync"
	if [ -n "$ci_pkgs" ]; then
		as_root "install:$ci_pkgs"
		log "installing:$ci_pkgs"
		[ -n "$apt_updated" ] || apt-get update -qq || log "apt-get update reported errors; installing anyway"
		apt_updated=1
		# shellcheck disable=SC2086 # word splitting of the package list is intended
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $ci_pkgs
	fi
	if [ "$(gitlab-ci-local --version 2>/dev/null)" != "$gitlab_ci_local_version" ]; then
		as_root "install gitlab-ci-local $gitlab_ci_local_version"
		log "installing gitlab-ci-local $gitlab_ci_local_version (npm)"
		npm install --global --no-fund --no-audit "gitlab-ci-local@$gitlab_ci_local_version" >&2
	fi
done

# --- 2. .debs of five architectures -----------------------------------------------------------
# busybox/: busybox-static, the suite's base image. gitlab-base/: what a GitLab-like base is made
# of (internal/fixture/gitlabbase: bash-static, busybox-static, dumb-init and the libc it links, git with
# its libraries, git-lfs) for the start-up runs of verify.
gitlab_base_pkgs="bash-static busybox-static dumb-init libc6 git git-lfs libpcre2-8-0 zlib1g"

have_deb() { ls "$1"/"$2"_*_"$3".deb >/dev/null 2>&1; }

# missing DIR PKGS: "pkg:arch" for every package of PKGS not cached in DIR, per architecture.
missing() {
	for arch in $busybox_arches; do
		for pkg in $2; do
			have_deb "$1" "$pkg" "$arch" || printf ' %s:%s' "$pkg" "$arch"
		done
	done
}

missing_busybox=$(missing "$busybox_dir" busybox-static)
missing_base=$(missing "$gitlab_base_dir" "$gitlab_base_pkgs")
[ -z "$missing_busybox$missing_base" ] && exit 0

as_root "download$missing_busybox$missing_base"
mkdir -p "$busybox_dir" "$gitlab_base_dir"

# One run at a time: two concurrent runs would add and remove architectures under each other.
exec 9>"$cache_root/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
# A run that held the lock before may have fetched some meanwhile.
missing_busybox=$(missing "$busybox_dir" busybox-static)
missing_base=$(missing "$gitlab_base_dir" "$gitlab_base_pkgs")
[ -z "$missing_busybox$missing_base" ] && exit 0

native=$(dpkg --print-architecture)
added=""
tmp=""
cleanup() {
	for arch in $added; do
		dpkg --remove-architecture "$arch" || log "could not remove dpkg architecture $arch"
	done
	[ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

for arch in $busybox_arches; do
	[ "$arch" = "$native" ] && continue
	if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
		dpkg --add-architecture "$arch"
		added="$added $arch"
	fi
done

# The package lists must include the foreign architectures just added.
# A partial failure (a mirror in sync for one suite) is not fatal: the download below
# fails clearly if a package really is unavailable.
if [ -n "$added" ] || [ -z "$apt_updated" ]; then
	apt-get update -qq || log "apt-get update reported errors; trying the download anyway"
fi

# fetch DIR PKG:ARCH...: download into DIR; move into place only when every download
# succeeded, so a half-filled cache is never used.
fetch() {
	dir=$1
	shift
	[ $# -eq 0 ] && return 0
	tmp=$(mktemp -d "$dir/.download.XXXXXX")
	log "downloading into $dir:$*"
	# apt-get download writes into the current directory; run it as root without the _apt
	# sandbox so it can write into a root-owned cache directory.
	# shellcheck disable=SC2068 # one argument per package
	(cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root $@)
	mv "$tmp"/*.deb "$dir"/
	rm -rf "$tmp"
	tmp=""
}
# shellcheck disable=SC2086 # one argument per package
fetch "$busybox_dir" $missing_busybox
# shellcheck disable=SC2086 # one argument per package
fetch "$gitlab_base_dir" $missing_base
log ".debs cached in $busybox_dir and $gitlab_base_dir"
