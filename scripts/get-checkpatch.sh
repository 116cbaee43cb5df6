#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# get-checkpatch.sh: put the kernel's checkpatch.pl (plus spelling.txt,
# const_structs.checkpatch and .clang-format) into .cache/checkpatch/ and
# print the path of checkpatch.pl. Debian ships checkpatch only inside
# linux-source-X.Y's tarball, so that deb is downloaded (never installed),
# the four files are extracted and the deb is deleted. Idempotent.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
SRC_PKG=${CHECKPATCH_SRC_PKG:-linux-source-6.1}
FILES=(scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch .clang-format)

die() { echo "get-checkpatch.sh: $*" >&2; exit 1; }

dir=$CACHE/checkpatch
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

if [ ! -f "$dir/stamp" ]; then
	t0=$SECONDS
	tmp=$(mktemp -d "$dir/tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "get-checkpatch.sh: downloading $SRC_PKG" >&2
	(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$SRC_PKG" >&2) ||
		die "apt-get download $SRC_PKG failed"
	deb=$(ls "$tmp"/*.deb)
	tarball=./usr/src/$SRC_PKG.tar.xz
	top=$SRC_PKG
	echo "get-checkpatch.sh: extracting ${FILES[*]}" >&2
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "$tarball" |
		tar -xJ -C "$tmp" "${FILES[@]/#/$top/}" ||
		die "cannot extract checkpatch from $deb"
	for f in "${FILES[@]}"; do
		cp "$tmp/$top/$f" "$dir/"
	done
	chmod +x "$dir/checkpatch.pl"
	basename "$deb" >"$dir/stamp"
	echo "get-checkpatch.sh: done in $((SECONDS - t0)) s" >&2
fi
echo "$dir/checkpatch.pl"
