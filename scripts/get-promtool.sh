#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# get-promtool.sh: put Prometheus's promtool into .cache/tools/ and print
# its path. Bookworm ships promtool only inside the `prometheus` package
# (a server with a service), so that deb is downloaded (never installed),
# ./usr/bin/promtool is extracted and the deb is deleted. Idempotent.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
PKG=${PROMTOOL_PKG:-prometheus}

die() { echo "get-promtool.sh: $*" >&2; exit 1; }

dir=$CACHE/tools/promtool
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

if [ ! -x "$dir/promtool" ] || [ ! -f "$dir/stamp" ]; then
	t0=$SECONDS
	tmp=$(mktemp -d "$dir/tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "get-promtool.sh: downloading $PKG" >&2
	(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$PKG" >&2) ||
		die "apt-get download $PKG failed"
	deb=$(ls "$tmp"/*.deb)
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./usr/bin/promtool ||
		die "no usr/bin/promtool in $deb"
	mv "$tmp/usr/bin/promtool" "$dir/promtool"
	"$dir/promtool" --version >/dev/null 2>&1 || die "$dir/promtool does not run"
	basename "$deb" >"$dir/stamp"
	echo "get-promtool.sh: done in $((SECONDS - t0)) s" >&2
fi
echo "$dir/promtool"
