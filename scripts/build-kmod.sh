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
# Kernels whose builder (kernels.sh) is chroot:SUITE are built inside a
# SUITE chroot in .cache/chroots/ and tcptw.ko is copied out.
# Any compiler, sparse or modpost warning fails the build. The full log is
# kept in .cache/logs/build-K.log (build-K-DIRNAME.log for another
# OUTDIR). The last stdout line is the path of tcptw.ko.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}

die() { echo "build-kmod.sh: $*" >&2; exit 1; }

[ $# -ge 2 ] || { sed -n '3,19s/^# \{0,1\}//p' "$0" >&2; exit 2; }
k=$1
out=$2
shift 2

kernels=$REPO/scripts/kernels.sh
builder=$("$kernels" builder "$k")
"$kernels" fetch "$k" || die "cannot fetch kernel $k"
kdir=$("$kernels" kdir "$k")
read -r -a mflags <<<"$("$kernels" makeflags "$k")"
case $builder in
host | chroot:*) ;;
*) die "kernel $k: unknown builder '$builder' (see kernels.sh)" ;;
esac

# ensure_chroot SUITE RELEASE: a minbase SUITE chroot in .cache/chroots/
# with make and linux-headers-RELEASE apt-installed inside it (the host's
# packages are not touched). debootstrap itself is the bookworm deb,
# unpacked, not installed.
ensure_chroot() {
	local suite=$1 rel=$2 ch=$CACHE/chroots/$1 tools=$CACHE/tools mirror
	mkdir -p "$CACHE/chroots"
	exec 7>"$CACHE/chroots/.$suite.lock"
	flock 7
	if [ ! -f "$ch/.tcptw-debootstrap-done" ]; then
		if [ ! -x "$tools/debootstrap/usr/sbin/debootstrap" ]; then
			echo "build-kmod.sh: fetching debootstrap" >&2
			mkdir -p "$tools/debs"
			(cd "$tools/debs" && apt-get download -q -o APT::Sandbox::User=root debootstrap >&2) ||
				die "apt-get download debootstrap failed"
			dpkg-deb -x "$(ls "$tools"/debs/debootstrap_*.deb | tail -n 1)" "$tools/debootstrap"
		fi
		mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
		mirror=${mirror:-http://deb.debian.org/debian}
		echo "build-kmod.sh: debootstrap $suite into $ch (about a minute, ~750 MB)" >&2
		rm -rf "$ch"
		DEBOOTSTRAP_DIR=$tools/debootstrap/usr/share/debootstrap \
			"$tools/debootstrap/usr/sbin/debootstrap" --variant=minbase \
			--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
			"$suite" "$ch" "$mirror" >"$CACHE/logs/debootstrap-$suite.log" 2>&1 ||
			die "debootstrap $suite failed, log: $CACHE/logs/debootstrap-$suite.log"
		# Mirrors may serve an expired sid InRelease; signatures still count.
		printf 'Acquire::Check-Valid-Until "false";\n' >"$ch/etc/apt/apt.conf.d/99tcptw"
		touch "$ch/.tcptw-debootstrap-done"
	fi
	if [ ! -f "$ch/.tcptw-headers-$rel" ]; then
		echo "build-kmod.sh: installing make linux-headers-$rel in the $suite chroot" >&2
		in_chroot "$ch" "apt-get update -qq && apt-get install -y -qq --no-install-recommends make linux-headers-$rel" \
			>"$CACHE/logs/chroot-$suite-headers.log" 2>&1 ||
			die "cannot install linux-headers-$rel in $ch, log: $CACHE/logs/chroot-$suite-headers.log"
		touch "$ch/.tcptw-headers-$rel"
	fi
	exec 7>&-
}

# in_chroot DIR CMD: run CMD with sh in the chroot, with /proc mounted
# (objtool needs it) in a private mount namespace, so no mount outlives us.
in_chroot() {
	unshare --mount --propagation private -- sh -c '
		mount -t proc proc "$1/proc" &&
		exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root DEBIAN_FRONTEND=noninteractive sh -c "$2"' sh "$1" "$2"
}

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
# a build elsewhere (e.g. the sparse check's) keeps its own log
if [ "$out" != "$CACHE/build/$k" ] && [ "$out" != "$REPO" ]; then
	log=$CACHE/logs/build-$k-${out##*/}.log
fi
# what the module reports when it loads (the copies have no .git)
version=$("$REPO/scripts/version.sh" 2>/dev/null || echo unknown)
set -- TCPTW_VERSION="$version" "$@"
set +e
if [ "$builder" = host ]; then
	echo "build-kmod.sh: building for $k in $out (log $log)" >&2
	make -C "$kdir" M="$out" W=1 -j"$(nproc)" "${mflags[@]}" "$@" modules >"$log" 2>&1
	rc=$?
else
	suite=${builder#chroot:}
	rel=$("$kernels" release "$k")
	ch=$CACHE/chroots/$suite
	ensure_chroot "$suite" "$rel"
	# one directory per OUTDIR: the test build must not share objects
	cdir=/build/tcptw-$k-${out##*/}
	echo "build-kmod.sh: building for $k in the $suite chroot ($ch$cdir, log $log)" >&2
	mkdir -p "$ch$cdir"
	rm -rf "$ch$cdir/kmod"
	cp -a "$out/Kbuild" "$out/kmod" "$ch$cdir/"
	args=$(printf ' %q' W=1 -j"$(nproc)" "${mflags[@]}" "$@" modules)
	in_chroot "$ch" "make -C /usr/src/linux-headers-$rel M=$cdir$args" >"$log" 2>&1
	rc=$?
	# by rename: a guest may be loading the previous one right now
	[ $rc -ne 0 ] || { cp "$ch$cdir/tcptw.ko" "$out/tcptw.ko.new" &&
		mv "$out/tcptw.ko.new" "$out/tcptw.ko"; }
fi
set -e
if [ $rc -ne 0 ]; then
	cat "$log" >&2
	die "build for $k failed (exit $rc), log: $log"
fi
# make's own note about a parent's jobserver (`make -j2` at the top) is
# not a warning about the code
if grep -i 'warning:' "$log" | grep -qv 'jobserver'; then
	grep -i -B2 -A3 'warning:' "$log" | grep -v 'jobserver' >&2
	# Drop the objects, or the next (incremental) build would not
	# recompile them and the warnings would silently go away.
	find "$out/kmod" ${ch:+"$ch$cdir/kmod"} -name '*.o' -delete
	rm -f "$out"/tcptw.ko "$out"/tcptw.o
	die "build for $k has warnings (W=1 must be clean), log: $log"
fi
[ -f "$out/tcptw.ko" ] || die "no tcptw.ko in $out after the build"
echo "$out/tcptw.ko"
