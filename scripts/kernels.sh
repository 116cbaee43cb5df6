#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian kernels (image + headers) into .cache/kernels/<name>/ without
# installing anything on the host: apt-get download + dpkg-deb -x only.
#
#   kernels.sh list              supported kernel names, one per line
#   kernels.sh list-debug        the debug kernels (not in list: see below)
#   kernels.sh fetch K           download + unpack K (idempotent, quiet stdout)
#   kernels.sh release K         uname -r of K                (needs a fetch)
#   kernels.sh kdir K            headers build dir of K       (needs a fetch)
#   kernels.sh image K           vmlinuz of K                 (needs a fetch)
#   kernels.sh makeflags K       extra make args to build modules for K
#   kernels.sh builder K         how to build modules for K: host | chroot:SUITE
#   kernels.sh slow K            selftest timeout multiplier in K's guest
#   kernels.sh memory K          guest memory for K (vng --memory)
#   kernels.sh append K          kernel command line options for K's guests
#   kernels.sh suite SUITE       make SUITE known to apt, pinned (deps.sh)
#
# Adding a kernel is one row in the table below. Versions are never hard
# coded: the newest linux-image-amd64 of the suite whose version matches the
# glob is taken at fetch time, and its Depends name the ABI (uname -r).
# Debug kernels (DEBUG_TABLE) are built, not fetched: scripts/debug-kernel.sh.
set -euo pipefail

# name  suite               version  builder     image packages (@R@ = uname -r, comma separated)          image path inside the prefix          makeflags (- = none)  slow
KERNEL_TABLE='
5.10    bullseye            5.10.*   host        linux-image-@R@-unsigned                                  boot/vmlinuz-@R@                      CC=gcc-12             3
6.1     bookworm            6.1.*    host        linux-image-@R@-unsigned                                  boot/vmlinuz-@R@                      -                     2
6.12    bookworm-backports  6.12.*   host        linux-image-@R@-unsigned                                  boot/vmlinuz-@R@                      -                     2
7.2     sid                 7.2.*    chroot:sid  linux-base-@R@,linux-binary-unsigned-@R@,linux-modules-@R@ usr/lib/modules/@R@/vmlinuz.unsigned  -                     2'
# Notes per row (kept out of the code on purpose):
# 5.10: headers' .kernelvariables say gcc-10 (bullseye only); gcc-12 works.
# 6.12: headers ship a BTF vmlinux, so module builds need pahole (deps.sh).
# 7.2:  kbuild binaries need glibc 2.38 and the headers gcc-16, so a bookworm
#       host boots the fetched image but builds modules in a sid chroot
#       (builder chroot:sid, see build-kmod.sh).
# slow: what the per-script timeout of selftests/settings is multiplied by
#       in this kernel's guest (TCPTW_TIMEOUT_MULT): an exec costs about
#       twice as much in a 5.10 guest under TCG, and two guests may share
#       the 2 cores.
# builder: host = make on this machine; chroot:SUITE = make inside a
#       debootstrapped SUITE chroot in .cache/chroots/ with the headers
#       apt-installed there (never on the host).

# Debug kernels: built from Debian's linux-source package by
# scripts/debug-kernel.sh (KASAN, lockdep, kmemleak; ~30 min on 2 cores)
# into ~/.cache/tcptw/, outside the clone. They are not in `list` (so not
# in `make check KERNELS=all` nor CI): name them, `make check
# KERNELS=6.1-debug`. Modules are built on the host against the build tree.
# 7.2-kcsan is the KCSAN lane's (scripts/kcsan-lane.sh): the data race
# detector instead of KASAN, lockdep and kmemleak (flavour kcsan).
# name      source package    slow  memory flavour
DEBUG_TABLE='
6.1-debug   linux-source-6.1  16    3G     debug
7.2-debug   linux-source-7.2  16    3G     debug
7.2-kcsan   linux-source-7.2  8     2G     kcsan'
# slow: KASAN inline + lockdep + kmemleak under TCG: scripts took 8 to 23
#       times as long as on the stock 6.1 (factor 2) here, 23 with two
#       debug guests sharing the 2 cores.
# memory: KASAN's shadow takes an eighth of it, kmemleak keeps metadata per
#       object.

# Boot options of every guest (kernels.sh append K; vng-run.sh adds them).
# Stock kernels boot as users run them, except with TCPTW_POISON=1 (make
# soak sets it): then the slab and page checks Debian builds in but
# leaves off. F: consistency checks on every slab free (double free), Z:
# red zones (overflows), P: freed objects poisoned and checked when
# reused (writes after free); page_poison does the same for whole pages.
# A report says BUG and fails the run instead of passing silently. Not U
# (a stack trace saved at every slab alloc and free: the cost, and only
# the report's detail) and not init_on_free: page_poison overrides it
# ("will take precedence"). Their cost, counted in guest instructions
# (make bench's plugin, 6.1, 2026-11-27): a short connection 160k
# instructions without, 258k with slub_debug=FZ, 343k with FZP and
# page_poison; a wrk request 254k, 420k, 660k. That doubled the whole
# suite's time, more than CI's 90 minutes had room for; the debug
# kernels' KASAN (kernels.sh list-debug) is the lane for memory errors.
STOCK_APPEND=
[ "${TCPTW_POISON:-0}" != 1 ] || STOCK_APPEND='slub_debug=FZP page_poison=1'
# 5.10 keeps the red zones and free checks but not the poisoning (P,
# page_poison): with it its guests ran twice as long (tcptw_listen.sh 386 s
# against 190 s with FZ alone, two guests side by side, 2026-11-25).
STOCK_APPEND_5_10=
[ "${TCPTW_POISON:-0}" != 1 ] || STOCK_APPEND_5_10='slub_debug=FZ'
# Debug kernels: KASAN and kmemleak do this job; a bigger log buffer keeps
# a report from pushing the start of the run out of dmesg. KASAN prints
# only its first report unless kasan_multi_shot: one boot of four on
# 2026-11-25 had a report of its own at 3.4 s, before tcptw (an interrupt
# during identify_cpu), and every later one would have gone unprinted.
# no5lvl: QEMU's -cpu max offers 5-level paging, and with it the 7.2
# debug kernel reported a KASAN wild-memory-access (direct-map address
# 0xff11...) in do_raw_spin_lock from an interrupt during identify_cpu
# in 2 boots of 2 on 2026-11-27, the second an endless stream of them
# before the command ever ran; with 4-level paging, none (run_vm.sh and
# vng-run.sh boot again after such a report anyway).
DEBUG_APPEND='log_buf_len=8M kasan_multi_shot no5lvl'

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}

die() { echo "kernels.sh: $*" >&2; exit 1; }
log() { echo "kernels.sh: $*" >&2; }

# row K: print the table row of K, or fail
row() {
	local r
	r=$(awk -v k="$1" '$1 == k' <<<"$KERNEL_TABLE")
	[ -n "$r" ] || r=$(awk -v k="$1" '$1 == k' <<<"$DEBUG_TABLE")
	[ -n "$r" ] || die "unknown kernel '$1' (known: $(list | tr '\n' ' ')$(list_debug | tr '\n' ' '))"
	echo "$r"
}

is_debug() { awk -v k="$1" '$1 == k { f = 1 } END { exit !f }' <<<"$DEBUG_TABLE"; }

col() { row "$1" | awk -v c="$2" '{ print $c }'; }

list() { awk 'NF && $1 !~ /^#/ { print $1 }' <<<"$KERNEL_TABLE"; }

list_debug() { awk 'NF && $1 !~ /^#/ { print $1 }' <<<"$DEBUG_TABLE"; }

info_file() { echo "$CACHE/kernels/$1/info"; }

# info K VAR: a value recorded by fetch
info() {
	local f
	f=$(info_file "$1")
	row "$1" >/dev/null
	[ -f "$f" ] || die "kernel $1 not fetched yet; run: $0 fetch $1"
	awk -F= -v v="$2" '$1 == v { sub(/^[^=]*=/, ""); print }' "$f"
}

# Add the non-bookworm suites with the pins of apt-sources.md (bookworm
# keeps priority 900, the others 50), once, and only when needed.
ensure_suite() {
	local suite=$1 mirror
	case $suite in
	bookworm | bookworm-security | bookworm-updates) return 0 ;;
	esac
	if apt-cache policy 2>/dev/null | grep -q "n=$suite,"; then
		return 0
	fi
	mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	mirror=${mirror:-http://deb.debian.org/debian}
	log "adding pinned apt sources (bookworm-backports bullseye sid) for $suite"
	# Pins first, so there is never a moment where sid could win.
	cat >/etc/apt/preferences.d/tcptw-kernels <<'EOF'
Package: *
Pin: release n=bookworm
Pin-Priority: 900

Package: *
Pin: release n=bookworm-security
Pin-Priority: 900

Package: *
Pin: release n=bookworm-updates
Pin-Priority: 900

Package: *
Pin: release n=bullseye
Pin-Priority: 50

Package: *
Pin: release n=sid
Pin-Priority: 50
EOF
	cat >/etc/apt/sources.list.d/tcptw-kernels.sources <<EOF
Types: deb
URIs: $mirror
Suites: bookworm-backports bullseye sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	apt-get -o DPkg::Lock::Timeout=600 update >&2 ||
		die "apt-get update failed after adding $suite"
	apt-cache policy 2>/dev/null | grep -q "n=$suite," ||
		die "suite $suite still unknown to apt after apt-get update"
}

# newest VERSION of linux-image-amd64 in suite (or its -security/-updates)
# whose version matches the glob
newest_meta() {
	local suite=$1 glob=$2 best="" v
	while read -r v; do
		# shellcheck disable=SC2053
		[[ $v == $glob ]] || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done < <(apt-cache madison linux-image-amd64 |
		awk -F'|' -v s="$suite" '{
			split($3, a, " "); split(a[2], b, "/");
			if (b[1] == s || b[1] == s "-security" || b[1] == s "-updates") {
				gsub(/ /, "", $2); print $2 } }')
	[ -n "$best" ] || die "no linux-image-amd64 $glob in $suite"
	echo "$best"
}

# depends PKG=VER: the Depends of one exact package version, one name a line
depends() {
	apt-cache show "$1" | awk '/^Depends:/ { sub(/^Depends: */, ""); print; exit }' |
		tr ',' '\n' | sed 's/^ *//; s/ .*//; s/|.*//'
}

# pkg_version P PV: the version of P to fetch with a kernel of source
# version PV: PV itself, else, for linux-kbuild-*, the archive's one of the
# same upstream release at PV or later, as apt would install it beside
# the headers (they depend on linux-kbuild (>= PV)). A security update
# replaces the kbuild package before the meta package moves to the new
# ABI: for a while only the newer revision is there (6.1.192-3 beside
# linux-image-amd64 6.1.192-2's -56 ABI).
pkg_version() {
	local p=$1 pv=$2 v vs
	# (apt-cache show P=V exits 0 for a version it does not have)
	vs=$(apt-cache madison "$p" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
	if grep -qxF -- "$pv" <<<"$vs"; then
		echo "$pv"
		return 0
	fi
	case $p in
	linux-kbuild-*) ;;
	*) return 1 ;;
	esac
	for v in $vs; do
		if [ "${v%-*}" = "${pv%-*}" ] && dpkg --compare-versions "$v" gt "$pv"; then
			log "$p=$pv is not in the archive; taking $v (same upstream release)"
			echo "$v"
			return 0
		fi
	done
	return 1
}

# fetch_debug K: build (or find in its cache) debug kernel K and record
# where it is; checked on every call, as the config may have changed
fetch_debug() {
	local k=$1 dir=$CACHE/kernels/$1
	mkdir -p "$dir"
	"$REPO/scripts/debug-kernel.sh" build "$(col "$k" 2)" "$(col "$k" 5)" >"$dir/info.tmp" ||
		die "cannot build debug kernel $k (scripts/debug-kernel.sh)"
	mv "$dir/info.tmp" "$dir/info"
}

fetch() {
	local k=$1 r suite glob imgs imgpath meta pv rel pkgs p v dir root t0
	r=$(row "$k")
	if is_debug "$k"; then
		fetch_debug "$k"
		return
	fi
	read -r _ suite glob _ imgs imgpath _ <<<"$r"
	dir=$CACHE/kernels/$k
	root=$dir/root
	mkdir -p "$dir"
	exec 9>"$dir/.lock"
	flock 9
	[ -f "$dir/info" ] && return 0
	t0=$SECONDS

	ensure_suite "$suite"
	meta=$(newest_meta "$suite" "$glob")
	rel=$(depends "linux-image-amd64=$meta" | sed -n 's/^linux-image-//p' | head -1)
	[ -n "$rel" ] || die "cannot read the ABI from linux-image-amd64=$meta"
	# The image/headers packages carry the version of their source package,
	# which the meta package pins with (= PV).
	pv=$(apt-cache show "linux-image-amd64=$meta" |
		sed -n "s/^Depends:.*linux-image-$rel (= \([^)]*\)).*/\1/p" | head -1)
	pv=${pv:-$meta}
	log "$k: linux $pv, release $rel"

	pkgs=$(tr ',' ' ' <<<"${imgs//@R@/$rel}")
	pkgs="$pkgs linux-headers-$rel"
	for p in $(depends "linux-headers-$rel=$pv"); do
		case $p in
		linux-headers-* | linux-kbuild-*) pkgs="$pkgs $p" ;;
		esac
	done

	rm -rf "$dir/debs" "$root"
	mkdir -p "$dir/debs" "$root"
	for p in $pkgs; do
		v=$(pkg_version "$p" "$pv") || die "no $p=$pv in the archive"
		log "$k: downloading $p=$v"
		(cd "$dir/debs" && apt-get download -q -o APT::Sandbox::User=root "$p=$v" >&2) ||
			die "apt-get download $p=$v failed"
	done
	for p in "$dir"/debs/*.deb; do
		log "$k: unpacking $(basename "$p")"
		dpkg-deb -x "$p" "$root"
	done

	# The headers Makefile includes the -common tree by absolute path.
	sed -i "s|/usr/src/|$root/usr/src/|g" "$root/usr/src/linux-headers-$rel/Makefile"
	# Merged-/usr packages (7.2) only have usr/lib/modules; depmod -b wants lib/.
	if [ ! -e "$root/lib" ] && [ -d "$root/usr/lib/modules" ]; then
		ln -s usr/lib "$root/lib"
	fi
	depmod -b "$root" "$rel" >&2

	imgpath=$root/${imgpath//@R@/$rel}
	[ -f "$imgpath" ] || die "no kernel image at $imgpath"
	[ -f "$root/usr/src/linux-headers-$rel/Makefile" ] || die "no headers for $rel"
	cat >"$dir/info.tmp" <<EOF
VERSION=$pv
RELEASE=$rel
IMAGE=$imgpath
KDIR=$root/usr/src/linux-headers-$rel
EOF
	mv "$dir/info.tmp" "$dir/info"
	log "$k: fetched in $((SECONDS - t0)) s ($(du -sh "$dir/debs" | cut -f1) of debs, $(du -sh "$root" | cut -f1) unpacked)"
}

makeflags() {
	local m
	is_debug "$1" && return 0
	m=$(col "$1" 7)
	[ "$m" = - ] || echo "$m"
}

builder() {
	if is_debug "$1"; then
		row "$1" >/dev/null
		echo host
	else
		col "$1" 4
	fi
}

slow() {
	if is_debug "$1"; then col "$1" 3; else col "$1" 8; fi
}

memory() {
	if is_debug "$1"; then col "$1" 4; else row "$1" >/dev/null && echo 2G; fi
}

append() {
	if is_debug "$1"; then
		echo "$DEBUG_APPEND"
	elif [ "$1" = 5.10 ]; then
		echo "$STOCK_APPEND_5_10"
	else
		row "$1" >/dev/null && echo "$STOCK_APPEND"
	fi
}

usage() {
	if [ "${1:-2}" -eq 0 ]; then
		sed -n '3,17s/^# \{0,1\}//p' "$0"
	else
		sed -n '3,17s/^# \{0,1\}//p' "$0" >&2
	fi
	exit "${1:-2}"
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
list) list ;;
list-debug) list_debug ;;
fetch)
	[ $# -eq 1 ] || usage
	fetch "$1"
	;;
release | kdir | image)
	[ $# -eq 1 ] || usage
	v=$(tr a-z A-Z <<<"$cmd")
	info "$1" "$v"
	;;
makeflags)
	[ $# -eq 1 ] || usage
	makeflags "$1"
	;;
builder)
	[ $# -eq 1 ] || usage
	builder "$1"
	;;
slow | memory | append)
	[ $# -eq 1 ] || usage
	"$cmd" "$1"
	;;
suite)
	[ $# -eq 1 ] || usage
	ensure_suite "$1"
	;;
-h | --help | help) usage 0 ;;
*) usage ;;
esac
