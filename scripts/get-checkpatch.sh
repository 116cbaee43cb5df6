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
DIR=$CACHE/checkpatch

source "$REPO/scripts/deb-fetch.sh"

# extract DEB TMP : the files sit in a tarball inside the deb
extract()
{
	local f

	echo "get-checkpatch.sh: extracting ${FILES[*]}" >&2
	dpkg-deb --fsys-tarfile "$1" | tar -xO "./usr/src/$SRC_PKG.tar.xz" |
		tar -xJ -C "$2" "${FILES[@]/#/$SRC_PKG/}" || return 1
	for f in "${FILES[@]}"; do
		cp "$2/$SRC_PKG/$f" "$DIR/" || return 1
	done
	chmod +x "$DIR/checkpatch.pl"
}

deb_fetch_once "$DIR" "$SRC_PKG" extract
echo "$DIR/checkpatch.pl"
