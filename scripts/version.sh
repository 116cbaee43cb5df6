#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# version.sh: the version tcptw reports, from one place: the top entry of
# debian/changelog (the Debian packages, dkms.conf and `tcptw --version`
# all read it). In a git checkout the commit is appended, so that a
# development build says which one it is: 0.1.0+g96e9c3c (-dirty with
# uncommitted changes). Package builds have no .git and print 0.1.0.
here=$(cd "$(dirname "$0")/.." && pwd)
v=$(sed -n '1s/^tcptw (\([^)]*\)).*/\1/p' "$here/debian/changelog" 2>/dev/null)
if [ -z "$v" ]; then
	echo "version.sh: no version in $here/debian/changelog" >&2
	exit 1
fi
if [ -e "$here/.git" ] && g=$(git -C "$here" describe --always --dirty --exclude='*' 2>/dev/null); then
	v=$v+g$g
fi
echo "$v"
