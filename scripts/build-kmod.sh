#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kmod.sh K OUTDIR [extra make args...]
#
# Build tcptw.ko (top-level Kbuild + kmod/) against the headers of kernel K
# (a name from `kernels.sh list`, fetched if needed) with W=1, K's make
# flags and the extra args (e.g. C=2 for sparse).
#   OUTDIR = the repo root: build in place (make -C KDIR M=<repo>).
#   OUTDIR = '':            build in .cache/build/K/ (a copy of Kbuild and
#                           kmod/), so several kernels don't clobber each other.
#   OUTDIR = another dir:   the same, in that directory.
# Any compiler, sparse or modpost warning fails the build. The full log is
# kept in .cache/logs/build-K.log. The last stdout line is the path of
# tcptw.ko.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}

die() { echo "build-kmod.sh: $*" >&2; exit 1; }

[ $# -ge 2 ] || { sed -n '3,17s/^# \{0,1\}//p' "$0" >&2; exit 2; }
k=$1
out=$2
shift 2

kernels=$REPO/scripts/kernels.sh
builder=$("$kernels" builder "$k")
[ "$builder" = host ] ||
	die "kernel $k needs builder '$builder', which this script does not provide yet (see kernels.sh)"
"$kernels" fetch "$k" || die "cannot fetch kernel $k"
kdir=$("$kernels" kdir "$k")
read -r -a mflags <<<"$("$kernels" makeflags "$k")"

if [ -z "$out" ]; then
	out=$CACHE/build/$k
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

exec 9>"$out/.tcptw-build.lock"
flock 9

if [ "$out" != "$REPO" ]; then
	# Copy only the module sources; keep objects from the last build so
	# that make stays incremental (timestamps are preserved).
	if command -v rsync >/dev/null; then
		rsync -a --delete "$REPO/Kbuild" "$REPO/kmod" "$out/"
	else
		rm -rf "$out/kmod.new"
		cp -a "$REPO/kmod" "$out/kmod.new"
		cp -a "$REPO/Kbuild" "$out/Kbuild"
		# Keep built objects whose source is unchanged.
		(cd "$out" && [ -d kmod ] && find kmod -name '*.o' -o -name '.*.cmd' |
			while read -r f; do
				mkdir -p "kmod.new/$(dirname "$f")"
				cp -a "$f" "kmod.new/$f"
			done) || true
		rm -rf "$out/kmod"
		mv "$out/kmod.new" "$out/kmod"
	fi
fi

mkdir -p "$CACHE/logs"
log=$CACHE/logs/build-$k.log
echo "build-kmod.sh: building for $k in $out (log $log)" >&2
set +e
make -C "$kdir" M="$out" W=1 -j"$(nproc)" "${mflags[@]}" "$@" modules >"$log" 2>&1
rc=$?
set -e
if [ $rc -ne 0 ]; then
	cat "$log" >&2
	die "build for $k failed (exit $rc), log: $log"
fi
if grep -qi 'warning:' "$log"; then
	grep -i -B2 -A3 'warning:' "$log" >&2
	# Drop the objects, or the next (incremental) build would not
	# recompile them and the warnings would silently go away.
	find "$out/kmod" -name '*.o' -delete
	rm -f "$out"/tcptw.ko "$out"/tcptw.o
	die "build for $k has warnings (W=1 must be clean), log: $log"
fi
[ -f "$out/tcptw.ko" ] || die "no tcptw.ko in $out after the build"
echo "$out/tcptw.ko"
