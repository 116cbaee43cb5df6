# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# deb-fetch.sh: sourced by the get-*.sh scripts, which take one or two
# files out of a Debian package without installing it.
#
# deb_fetch_once DIR PKG EXTRACT : under DIR/.lock, unless DIR/stamp
# exists, `apt-get download` PKG into a temporary directory inside DIR,
# run `EXTRACT DEB TMP` (it puts what it wants into DIR, non-zero on
# failure), record the deb's file name in DIR/stamp and delete the rest.
# Safe to run concurrently; a failed run leaves no stamp.

deb_fetch_once()
{
	local dir=$1 pkg=$2 extract=$3 me=${0##*/} tmp deb t0=$SECONDS

	mkdir -p "$dir"
	exec 9>"$dir/.lock"
	flock 9
	if [ -f "$dir/stamp" ]; then
		exec 9>&-
		return 0
	fi
	tmp=$(mktemp -d "$dir/tmp.XXXXXX")
	echo "$me: downloading $pkg" >&2
	if ! (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root \
			"$pkg" >&2); then
		rm -rf "$tmp"
		echo "$me: apt-get download $pkg failed" >&2
		return 1
	fi
	deb=$(ls "$tmp"/*.deb)
	if ! "$extract" "$deb" "$tmp"; then
		rm -rf "$tmp"
		echo "$me: cannot extract what is needed from ${deb##*/}" >&2
		return 1
	fi
	basename "$deb" >"$dir/stamp"
	rm -rf "$tmp"
	exec 9>&-
	echo "$me: done in $((SECONDS - t0)) s" >&2
}
