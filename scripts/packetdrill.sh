#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# packetdrill.sh [KERNEL]: `make packetdrill`. The kernel's own TCP tests
# with tcptw loaded (selftests/packetdrill_vm.sh says what is asserted), in
# one guest of KERNEL (default 6.1):
#   1. packetdrill from ../shared/vendor/packetdrill (google/packetdrill at
#      the commit its ORIGIN names; PACKETDRILL_SRC for another copy),
#      copied into .cache/packetdrill/src and built there (./configure &&
#      make), again only when the source changed;
#   2. the kernel's own scripts, tools/testing/selftests/net/packetdrill of
#      Debian's linux-source-7.2 (PACKETDRILL_KSRC=linux-source-X.Y for
#      another; apt-get download, nothing installed), into
#      .cache/packetdrill/kernel-X.Y;
#   3. tcptw.ko for KERNEL, then the guest.
# Environment passed to the guest: PD_FILTER (a regex on the scripts'
# paths), PD_FAMS ("ipv4", "ipv4 ipv6"). Log in
# .cache/logs/packetdrill-KERNEL.log. Exit 0 iff nothing failed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
PDC=$CACHE/packetdrill
cd "$REPO" || exit 1
k=${1:-6.1}
log=$CACHE/logs/packetdrill-$k.log
src=${PACKETDRILL_SRC:-$REPO/../shared/vendor/packetdrill}
ksrc=${PACKETDRILL_KSRC:-linux-source-7.2}
mkdir -p "$CACHE/logs" "$PDC"

die() { echo "packetdrill.sh: $*" >&2; exit 1; }

scripts/deps.sh >/dev/null || exit 1
[ -d "$src/gtests/net/packetdrill" ] ||
	die "no packetdrill source in $src (PACKETDRILL_SRC)"

# 1. packetdrill, rebuilt when the source's listing changed
stamp=$( (cd "$src" && find . -type f -printf '%P %s %T@\n' | sort) | md5sum | cut -c1-32)
if [ ! -x "$PDC/src/gtests/net/packetdrill/packetdrill" ] ||
   [ "$(cat "$PDC/src.stamp" 2>/dev/null)" != "$stamp" ]; then
	echo "packetdrill.sh: building packetdrill from $src"
	rm -rf "$PDC/src" && cp -r "$src" "$PDC/src" && chmod -R u+w "$PDC/src" ||
		die "copying $src failed"
	# git's symlinks, stored as files holding their target (tcp/common/
	# defaults.sh): links again, so that the scripts' init commands run
	find "$PDC/src" -type f -size -200c ! -name '*.pkt' | while read -r f; do
		t=$(cat "$f")
		case $t in
		*/*) [ "$(wc -l <"$f")" -le 1 ] && [ -f "$(dirname "$f")/$t" ] &&
			ln -sf "$t" "$f" ;;
		esac
	done
	(cd "$PDC/src/gtests/net/packetdrill" && ./configure && make -j"$(nproc)") \
		>"$CACHE/logs/packetdrill-build.log" 2>&1 ||
		die "the build failed: $CACHE/logs/packetdrill-build.log"
	echo "$stamp" >"$PDC/src.stamp"
fi

# 2. the kernel's own scripts
kdir=$PDC/kernel-${ksrc#linux-source-}
if [ ! -d "$kdir" ]; then
	echo "packetdrill.sh: fetching $ksrc's packetdrill scripts"
	tmp=$(mktemp -d) || exit 1
	(cd "$tmp" && apt-get download "$ksrc" >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; die "apt-get download $ksrc failed"; }
	(cd "$tmp" &&
	 dpkg-deb --fsys-tarfile "$ksrc"_*.deb |
		tar -x --wildcards "./usr/src/$ksrc.tar.*" &&
	 tar -xf usr/src/"$ksrc".tar.* --wildcards \
		"$ksrc/tools/testing/selftests/net/packetdrill/*") ||
		{ rm -rf "$tmp"; die "extracting $ksrc failed"; }
	mv "$tmp/$ksrc/tools/testing/selftests/net/packetdrill" "$kdir"
	rm -rf "$tmp"
fi

# 3. the module and the guest
ko=$(scripts/build-kmod.sh "$k" '' | tail -n 1) || exit 1
env_vars=""
[ -n "${PD_FILTER:-}" ] && env_vars+="PD_FILTER='$PD_FILTER' "
[ -n "${PD_FAMS:-}" ] && env_vars+="PD_FAMS='$PD_FAMS' "
VM_TIMEOUT=${VM_TIMEOUT:-7200} scripts/vng-run.sh "$k" \
	"${env_vars}selftests/packetdrill_vm.sh $ko" >"$log" 2>&1
rc=$?
grep -E '^(not ok|# scripts:|# with|# without)|flaky|^# [0-9]+ passed' "$log"
echo "log: $log"
exit $rc
