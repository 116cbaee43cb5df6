#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-build.sh [OUTDIR]: what `make deb` runs. Builds the tcptw-dkms and
# tcptw packages with `dpkg-buildpackage -b -us -uc` in a copy of the
# source tree (the tracked files and the untracked, not ignored ones, as
# they are in the working tree), so that the build's clean and its
# objects never touch the checkout others work in. Then runs lintian,
# which must report no error (tags with a reason are overridden in
# debian/*lintian-overrides). The debs, the .changes and lintian's
# output (lintian.txt) end up in OUTDIR (default .cache/deb/); the last
# lines of stdout are the paths of the two debs.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
out=${1:-$CACHE/deb}

die() { echo "deb-build.sh: $*" >&2; exit 1; }

for t in dpkg-buildpackage dh dh_dkms lintian; do
	command -v "$t" >/dev/null || die "$t not found; run scripts/deps.sh"
done

ver=$("$REPO/scripts/version.sh")
ver=${ver%%+g*}
[ "$(dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version)" = "$ver" ] ||
	die "scripts/version.sh and dpkg-parsechangelog disagree on the version"
grep -q '^PACKAGE_VERSION="#MODULE_VERSION#"' "$REPO/dkms.conf" ||
	die "dkms.conf must take its version from the package (PACKAGE_VERSION=\"#MODULE_VERSION#\")"

mkdir -p "$out"
out=$(cd "$out" && pwd)
exec 9>"$out/.lock"
flock 9
build=$out/build
src=$build/tcptw-$ver
rm -rf "$build"
mkdir -p "$src"
# the files a clean clone would have, plus new ones not yet committed
(cd "$REPO" && git ls-files -z -c -o --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf - | tar -xf - -C "$src") ||
	die "cannot copy the sources to $src"

t0=$SECONDS
echo "deb-build.sh: building tcptw $ver in $src (log $out/build.log)" >&2
if ! (cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	die "dpkg-buildpackage failed, log: $out/build.log"
fi
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mv "$build"/*.deb "$build"/*.changes "$build"/*.buildinfo "$out/"
changes=$(ls "$out"/tcptw_"$ver"_*.changes)
echo "deb-build.sh: built in $((SECONDS - t0)) s; lintian" >&2
lintian --info --display-info --pedantic --tag-display-limit 0 \
	"$changes" >"$out/lintian.txt" 2>&1 || true
sed 's/^/lintian: /' "$out/lintian.txt" >&2
if grep -q '^E: ' "$out/lintian.txt"; then
	die "lintian reports errors ($out/lintian.txt)"
fi
rm -rf "$build"
ls "$out"/tcptw-dkms_"$ver"_all.deb "$out"/tcptw_"$ver"_*.deb
