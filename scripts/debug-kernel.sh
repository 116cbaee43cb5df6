#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# debug-kernel.sh build [PKG [FLAVOUR]]  build (or reuse) the debug kernel;
#                               prints its info lines (VERSION= RELEASE=
#                               IMAGE= KDIR= KEY= MAKE_SECONDS=) on stdout
# debug-kernel.sh key [PKG [FLAVOUR]]    the cache key it would use:
#                               SRCVERSION-CONFIGHASH
#
# The kernel of the debug lane (docs/testing.md: Lanes): Debian's PKG source
# (default linux-source-6.1; apt-get download + dpkg-deb -x, never
# installed) configured as x86_64_defconfig + kvm_guest.config +
# scripts/debug-kernel.config (KASAN, lockdep, kmemleak, what the
# selftests and a virtme-ng 9p guest need, little else) + the series'
# own scripts/debug-kernel-SERIES.config if there is one.
#
# FLAVOUR kcsan (the KCSAN lane, docs/testing.md: Lanes): the same, but
# the data race detector instead of the checkers (KASAN and KCSAN exclude
# each other): debug-kernel.config without its "the checkers" section,
# plus scripts/debug-kernel-kcsan.config. Its trees are kept apart
# (cfg/VER-kcsan, build/VER-kcsan).
#
# Everything lives outside the clone, so `make clean` or a fresh clone
# keeps it: $TCPTW_DEBUG_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/tcptw/debug-kernel/
#   debs/          the source package
#   src/VER/       its tarball, extracted
#   build/VER/     the O= build tree: KDIR for tcptw.ko (one per source
#                  version, so a config change rebuilds incrementally)
#   root/KEY/      boot/vmlinuz-REL and lib/modules/REL (modules_install),
#                  the layout vng expects to find a kernel's modules in;
#                  plus info. KEY = source version + sha256 of the final
#                  .config (which records the gcc version too).
# A build runs under nice -n 19: 16 CPU-minutes, 28 minutes on this 2-core
# machine beside running guests; a cached kernel is found in seconds.
# MAKE_SECONDS is what the make that produced KEY took (an incremental
# one after a config change is shorter).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DK=${TCPTW_DEBUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tcptw/debug-kernel}
FRAGMENT=$REPO/scripts/debug-kernel.config

die() { echo "debug-kernel.sh: $*" >&2; exit 1; }
log() { echo "debug-kernel.sh: $*" >&2; }

[ $# -ge 1 ] || { sed -n '4,8s/^# \{0,1\}//p' "$0" >&2; exit 2; }
cmd=$1
pkg=${2:-linux-source-6.1}
flavour=${3:-debug}
series=${pkg#linux-source-}
case $flavour in
debug)	sfx= ;;
kcsan)	sfx=-kcsan ;;
*)	die "unknown flavour '$flavour' (debug or kcsan)" ;;
esac
# what one series needs on top (7.2: fprobes, the backend tcptw uses there)
SERIES_FRAGMENT=$REPO/scripts/debug-kernel-$series.config
[ -f "$SERIES_FRAGMENT" ] || SERIES_FRAGMENT=/dev/null

mkdir -p "$DK"
exec 9>"$DK/.lock"
flock 9

if [ "$flavour" = kcsan ]; then
	# the base without its checkers and its LOCALVERSION, then KCSAN's
	mkdir -p "$DK/cfg"
	sed -e '/^# --- the checkers/,/^# --- what tcptw hooks/{/^\(# \)\{0,1\}CONFIG_/d}' \
		-e '/^CONFIG_LOCALVERSION=/d' "$FRAGMENT" >"$DK/cfg/fragment-kcsan.tmp"
	cat "$REPO/scripts/debug-kernel-kcsan.config" >>"$DK/cfg/fragment-kcsan.tmp"
	mv "$DK/cfg/fragment-kcsan.tmp" "$DK/cfg/fragment-kcsan"
	FRAGMENT=$DK/cfg/fragment-kcsan
fi

# the newest version apt knows; offline, the newest one already here
ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	ver=$(ls "$DK/src" 2>/dev/null | sort -V | tail -n 1)
	[ -n "$ver" ] || die "apt knows no $pkg and none is cached"
fi
src=$DK/src/$ver
bld=$DK/build/$ver$sfx

if [ ! -f "$src/.tcptw-extracted" ]; then
	deb=$DK/debs/${pkg}_${ver}_all.deb
	if [ ! -f "$deb" ]; then
		log "downloading $pkg=$ver"
		mkdir -p "$DK/debs"
		(cd "$DK/debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$ver" >&2) ||
			die "apt-get download $pkg=$ver failed"
	fi
	log "extracting $pkg=$ver into $src"
	rm -rf "$src" "$DK/pkg"
	dpkg-deb -x "$deb" "$DK/pkg"
	mkdir -p "$src"
	tar -C "$src" --strip-components=1 -xJf "$DK/pkg/usr/src/$pkg.tar.xz"
	rm -rf "$DK/pkg"
	touch "$src/.tcptw-extracted"
fi

# The final .config, generated in a scratch tree (20 s) and checked:
# every line of the fragment must have survived olddefconfig. Its key is
# remembered per input (source version, fragment, compiler, this script).
cfg=$DK/cfg/$ver$sfx
mkdir -p "$cfg"
inputs=$({ echo "$ver"; gcc --version | head -n 1; cat "$FRAGMENT" "$SERIES_FRAGMENT" "$0"; } | sha256sum | cut -c1-16)
if [ -s "$cfg/key.$inputs" ]; then
	key=$(cat "$cfg/key.$inputs")
else
	rm -f "$cfg"/key.*
	cat "$FRAGMENT" "$SERIES_FRAGMENT" >"$cfg/fragment"
	(cd "$src" && make -s O="$cfg" x86_64_defconfig >/dev/null &&
		scripts/kconfig/merge_config.sh -m -O "$cfg" "$cfg/.config" \
			kernel/configs/kvm_guest.config "$cfg/fragment" >"$cfg/merge.log" 2>&1 &&
		make -s O="$cfg" olddefconfig >/dev/null 2>&1) ||
		die "configuring $src failed (log $cfg/merge.log)"
	bad=0
	while IFS= read -r l; do
		if [[ $l == "# CONFIG_"* ]]; then
			n=${l#\# }
			n=${n%% *}
			if grep -q "^$n=[ym]" "$cfg/.config"; then
				log "fragment wants $n unset, .config has $(grep "^$n=" "$cfg/.config")"
				bad=1
			fi
		elif ! grep -qxF "$l" "$cfg/.config"; then
			log "fragment wants $l, .config has: $(grep -E "^${l%%=*}=|^# ${l%%=*} " "$cfg/.config" || echo nothing)"
			bad=1
		fi
	done < <(grep -E '^(CONFIG_|# CONFIG_.* is not set)' "$cfg/fragment")
	[ $bad -eq 0 ] || die "scripts/debug-kernel.config (and ${SERIES_FRAGMENT#"$REPO"/}) does not apply to $pkg $ver (see above)"
	key=$ver-$(grep -v '^#' "$cfg/.config" | grep . | sort | sha256sum | cut -c1-12)
	echo "$key" >"$cfg/key.$inputs"
fi

if [ "$cmd" = key ]; then
	echo "$key"
	exit 0
fi
[ "$cmd" = build ] || die "unknown command $cmd"

root=$DK/root/$key
if [ ! -f "$root/info" ]; then
	mkdir -p "$bld"
	if ! cmp -s "$cfg/.config" "$bld/.config"; then
		cp "$cfg/.config" "$bld/.config"
	fi
	blog=$DK/build-$key.log
	log "building $pkg $ver ($key) in $bld with nice -n 19 -j$(nproc), log $blog (16 CPU-minutes)"
	t0=$SECONDS
	nice -n 19 make -C "$src" O="$bld" -j"$(nproc)" all >"$blog" 2>&1 ||
		{ tail -n 30 "$blog" >&2; die "kernel build failed, log $blog"; }
	secs=$((SECONDS - t0))
	rel=$(cat "$bld/include/config/kernel.release")
	log "built $rel in $secs s; installing into $root"
	rm -rf "$root.tmp"
	mkdir -p "$root.tmp/boot"
	make -s -C "$src" O="$bld" INSTALL_MOD_PATH="$root.tmp" INSTALL_MOD_STRIP=1 \
		modules_install >>"$blog" 2>&1 ||
		die "modules_install failed, log $blog"
	cp "$bld/arch/x86/boot/bzImage" "$root.tmp/boot/vmlinuz-$rel"
	cp "$bld/.config" "$root.tmp/boot/config-$rel"
	# the guest's modprobe must not follow these back to the build tree
	rm -f "$root.tmp/lib/modules/$rel/build" "$root.tmp/lib/modules/$rel/source"
	cat >"$root.tmp/info" <<EOF
VERSION=$ver
RELEASE=$rel
IMAGE=$root/boot/vmlinuz-$rel
KDIR=$bld
KEY=$key
MAKE_SECONDS=$secs
EOF
	rm -rf "$root"
	mv "$root.tmp" "$root"
fi
# a build tree reconfigured since (another key) no longer matches
cmp -s "$root/boot/config-$(awk -F= '$1 == "RELEASE" { print $2 }' "$root/info")" "$bld/.config" ||
	die "$bld was reconfigured after $key was built; remove $root to rebuild"
cat "$root/info"
