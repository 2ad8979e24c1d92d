#!/usr/bin/env bash
# tag-release.sh VERSION: tag a release of helperbuild, checked.
#
# In a clean work tree, it sets the CI template's helperbuild-version default
# (ci/gitlab/release.gitlab-ci.yml) to VERSION in a commit of its own, so an
# include at ref: VERSION installs helperbuild VERSION; runs the whole suite on
# that commit (`make test`, or HELPERBUILD_RELEASE_CHECK); and only when it
# passes tags the commit VERSION (annotated). When the check fails, the commit is
# removed again and nothing is tagged. Nothing is pushed: it prints the command.
# VERSION is vX.Y.Z[-pre], newer than every release tag in this history.
set -euo pipefail

die() { echo "tag-release: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: scripts/tag-release.sh vX.Y.Z"
version=$1
check=${HELPERBUILD_RELEASE_CHECK:-make test}
template=ci/gitlab/release.gitlab-ci.yml

cd "$(git rev-parse --show-toplevel)"
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || die "$version is not a release version: want vX.Y.Z or vX.Y.Z-pre (e.g. v0.1.0)"
[ -z "$(git status --porcelain)" ] || die "the work tree has changes: commit or stash them, so the tag names exactly what was checked"
! git rev-parse -q --verify "refs/tags/$version" >/dev/null || die "tag $version exists already"
# Semantic version order: with "-" read as "~", sort -V puts v1.0.0-rc.1 before v1.0.0.
semver_sort() { sed 's/-/~/' | sort -V | sed 's/~/-/'; }
newest=$(git tag --merged HEAD --list 'v*' | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$' | semver_sort | tail -n 1 || true)
if [ -n "$newest" ] && [ "$(printf '%s\n%s\n' "$newest" "$version" | semver_sort | tail -n 1)" != "$version" ]; then
	die "$version is not newer than the newest release tag $newest"
fi

start=$(git rev-parse HEAD)
# The first "default:" after "helperbuild-version:" is the template's default.
awk -v v="$version" '
	/^    helperbuild-version:/ { inblock = 1 }
	inblock && /^      default: / { print "      default: " v; inblock = 0; done = 1; next }
	{ print }
	END { if (!done) exit 3 }
' "$template" >"$template.tmp" || { rm -f "$template.tmp"; die "$template has no helperbuild-version default"; }
mv "$template.tmp" "$template"
git commit -q -m "release $version: the CI template installs helperbuild $version" -- "$template"

echo "tag-release: running '$check' on $(git rev-parse --short HEAD) (the release commit)"
if ! bash -c "$check"; then
	git reset -q --hard "$start"
	die "'$check' failed on the release commit: it was removed again, nothing is tagged"
fi
git tag -a "$version" -m "helperbuild $version"
echo "tag-release: tagged $version at $(git rev-parse --short HEAD); publish both: git push origin HEAD $version"
