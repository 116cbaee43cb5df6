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
DIR=$CACHE/tools/promtool

source "$REPO/scripts/deb-fetch.sh"

# extract DEB TMP
extract()
{
	dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" ./usr/bin/promtool &&
		"$2/usr/bin/promtool" --version >/dev/null 2>&1 &&
		mv "$2/usr/bin/promtool" "$DIR/promtool"
}

deb_fetch_once "$DIR" "$PKG" extract
echo "$DIR/promtool"
