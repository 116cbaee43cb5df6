#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-test.sh [--no-vm] KERNEL...: the install test of the Debian packages
# (part of `make check`), for 6.1 in bookworm and 5.10 in bullseye (dkms
# 2.8.4); other kernels are skipped, with the reason. Per kernel:
#   1. a clean SUITE chroot: debootstrap minbase plus systemd and man-db
#      (the tools the checks use), cached in .cache/chroots/deb-SUITE/ and
#      copied afresh into .cache/deb-test/K/root/ for each run;
#   2. the packages: `make deb`'s (scripts/deb-build.sh, on this bookworm
#      host); tcptw-dkms is the same for every suite, while the tcptw CLI
#      links against the suite's libc, so for another suite it is built
#      alike (dpkg-buildpackage -B) in a SUITE chroot
#      (.cache/chroots/deb-SUITE-build/, build dependencies cached);
#   3. apt installs the fetched linux-headers-REL debs of K
#      (scripts/kernels.sh), then ./tcptw-dkms_*.deb ./tcptw_*.deb
#      (--no-install-recommends: dkms recommends linux-headers-amd64,
#      which would add the suite's newest headers to the test);
#   4. checks: dkms status says installed for REL, tcptw.ko is under
#      /lib/modules/REL/updates/dkms/, dpkg, dkms, modinfo and
#      `tcptw --version` agree on the version, `man -w tcptw` finds the
#      page, the timer passes `systemd-analyze verify`;
#   5. boots K's guest (scripts/vng-run.sh) with that tcptw.ko, as dkms
#      installed it in the chroot, and runs selftests/tcptw_nat_paws.sh
#      (selftests/run_vm.sh); the module must say "loaded (VERSION)";
#   6. apt purge: no path of `dpkg -L` (taken before) is left, nor dkms'
#      tree or the .ko, nor anything named *tcptw* (dirs other packages
#      own excepted).
# --no-vm skips step 5 for every kernel; KERNEL:novm (e.g. 5.10:novm)
# skips it for that kernel only. TAP on stdout (one line per check, numbered in
# order); the logs are in .cache/logs/deb-test-K.log and the guest's in
# .cache/logs/deb-test-K-vm.log.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
LOGS=$CACHE/logs
kernels_sh=$REPO/scripts/kernels.sh
mkdir -p "$LOGS" "$CACHE/chroots" "$CACHE/deb-test"

vm=1
if [ "${1:-}" = --no-vm ]; then
	vm=0
	shift
fi
[ $# -ge 1 ] || { sed -n '3,31s/^# \{0,1\}//p' "$0" >&2; exit 2; }

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)) failed=1; echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# check NAME CMD...: one TAP line for CMD's exit status
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else notok "$name"; fi
}
note() { echo "# $*"; }
# the last lines of a log, as TAP diagnostics
tail_log() { tail -n "${2:-15}" "$1" | sed 's/^/#   /'; }

suite_of() {
	case $1 in
	6.1) echo bookworm ;;
	5.10) echo bullseye ;;
	*) return 1 ;;
	esac
}

mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}

# in_chroot DIR CMD: run CMD with sh in the chroot, with /proc mounted in
# a private mount namespace (no mount outlives it), as build-kmod.sh does
in_chroot() {
	unshare --mount --propagation private -- sh -c '
		mount -t proc proc "$1/proc" &&
		{ [ -z "$TCPTW_CHROOT_SYS" ] || mount --rbind /sys "$1/sys"; } &&
		exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			sh -c "$2"' sh "$1" "$2"
}

# base_chroot SUITE: .cache/chroots/deb-SUITE, made once (debootstrap
# minbase, then systemd and man-db); prints its path
base_chroot() {
	local suite=$1 ch=$CACHE/chroots/deb-$1 log=$LOGS/debootstrap-deb-$1.log
	(
		flock 7
		[ -f "$ch/.deb-test-base-done" ] && exit 0
		rm -rf "$ch"
		t0=$SECONDS
		echo "deb-test.sh: debootstrap $suite into $ch" >&2
		debootstrap --variant=minbase \
			--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
			"$suite" "$ch" "$mirror" >"$log" 2>&1 || exit 1
		printf 'Acquire::Check-Valid-Until "false";\n' >"$ch/etc/apt/apt.conf.d/99no-check-valid-until"
		in_chroot "$ch" "apt-get update -q && apt-get install -y -q --no-install-recommends systemd man-db" \
			>>"$log" 2>&1 || exit 1
		echo "deb-test.sh: $suite base chroot made in $((SECONDS - t0)) s" >&2
		touch "$ch/.deb-test-base-done"
	) 7>"$CACHE/chroots/.deb-$suite.lock" || return 1
	echo "$ch"
}

# suite_debs SUITE OUTDIR: the packages for SUITE into OUTDIR: 0 if
# both are there, 2 if only tcptw-dkms is (the CLI failed to build for
# SUITE), 1 if neither
suite_debs() {
	local suite=$1 out=$2 ch log=$LOGS/deb-build-$1.log base stamp ver
	mkdir -p "$out"
	rm -f "$out"/*.deb
	"$REPO/scripts/deb-build.sh" >"$LOGS/deb-build.log" 2>&1 || return 1
	cp "$CACHE"/deb/tcptw-dkms_*_all.deb "$out/"
	if [ "$suite" = bookworm ]; then
		cp "$CACHE"/deb/tcptw_*_amd64.deb "$out/"
		return 0
	fi
	# the CLI for another suite: built inside a SUITE chroot with the
	# build dependencies of debian/control (cached until they change)
	base=$(base_chroot "$suite") || return 2
	ch=$CACHE/chroots/deb-$suite-build
	stamp=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$REPO/debian/control" | md5sum | cut -c1-12)
	(
		flock 7
		[ -f "$ch/.deb-test-build-deps-$stamp" ] && exit 0
		rm -rf "$ch"
		cp -a "$base" "$ch"
		mkdir -p "$ch/build/deps/debian"
		cp "$REPO/debian/control" "$REPO/debian/changelog" "$ch/build/deps/debian/"
		in_chroot "$ch" "apt-get install -y -q --no-install-recommends build-essential && apt-get build-dep -y -q --no-install-recommends /build/deps" \
			>"$log" 2>&1 || exit 1
		touch "$ch/.deb-test-build-deps-$stamp"
	) 7>"$CACHE/chroots/.deb-$suite-build.lock" || return 2
	ver=$("$REPO/scripts/version.sh") || return 2
	ver=${ver%%+g*}
	rm -rf "$ch/build"
	mkdir -p "$ch/build/tcptw-$ver"
	(cd "$REPO" && git ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -xf - -C "$ch/build/tcptw-$ver") || return 2
	in_chroot "$ch" "cd /build/tcptw-$ver && dpkg-buildpackage -B -us -uc" >>"$log" 2>&1 || return 2
	cp "$ch"/build/tcptw_*_amd64.deb "$out/"
}

# Per kernel state, kept between the phases
declare -A root rel ko ver_of cli_of

# phase 1: chroot, install, checks
install_phase() {
	local k=$1 suite=$2 dir=$CACHE/deb-test/$1 log=$LOGS/deb-test-$1.log r base t0 v cli nocli
	t0=$SECONDS
	: >"$log"
	if ! "$kernels_sh" fetch "$k" >>"$log" 2>&1; then
		notok "$k: fetch kernel $k (log $log)"
		return 1
	fi
	r=$("$kernels_sh" release "$k")
	rel[$k]=$r
	if ! base=$(base_chroot "$suite" 2>>"$log"); then
		notok "$k: a clean $suite chroot (log $LOGS/debootstrap-deb-$suite.log)"
		tail_log "$LOGS/debootstrap-deb-$suite.log"
		return 1
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	suite_debs "$suite" "$dir/debs" 2>>"$log"
	case $? in
	1)
		notok "$k: make deb (log $LOGS/deb-build.log)"
		tail_log "$LOGS/deb-build.log"
		return 1
		;;
	2)
		cli=0
		ok "$k: make deb: $(cd "$dir/debs" && echo *.deb)"
		notok "$k: the tcptw CLI package builds in $suite (log $LOGS/deb-build-$suite.log)"
		grep -E ': (fatal )?error:' "$LOGS/deb-build-$suite.log" | head -n 8 | sed 's/^/#   /'
		;;
	*)
		cli=1
		ok "$k: packages for $suite: $(cd "$dir/debs" && echo *.deb)"
		;;
	esac
	cli_of[$k]=$cli
	# what the CLI checks say without a CLI package for this suite
	nocli="no $suite build of the tcptw CLI (not ok above)"
	v=$(dpkg-deb -f "$dir"/debs/tcptw-dkms_*.deb Version)
	ver_of[$k]=$v

	cp -a "$base" "$dir/root"
	root[$k]=$dir/root
	mkdir -p "$dir/root/root/debs"
	cp "$CACHE"/kernels/"$k"/debs/linux-headers-*.deb "$CACHE"/kernels/"$k"/debs/linux-kbuild-*.deb \
		"$dir"/debs/*.deb "$dir/root/root/debs/"
	note "$k: $suite chroot ready after $((SECONDS - t0)) s"

	# openssl as on most machines: dkms >= 3 makes its signing key with it
	if in_chroot "$dir/root" "apt-get install -y -q --no-install-recommends openssl /root/debs/linux-headers-*.deb /root/debs/linux-kbuild-*.deb" \
		>>"$log" 2>&1; then
		ok "$k: linux-headers-$r installed in a clean $suite chroot"
	else
		notok "$k: linux-headers-$r installed in a clean $suite chroot (log $log)"
		tail_log "$log"
		return 1
	fi
	note "$k: headers installed after $((SECONDS - t0)) s"
	local debs="./tcptw-dkms_${v}_all.deb"
	[ "$cli" = 0 ] || debs+=" ./tcptw_${v}_amd64.deb"
	if in_chroot "$dir/root" "cd /root/debs && apt-get install -y -q --no-install-recommends $debs" \
		>>"$log" 2>&1; then
		ok "$k: apt install $debs"
	else
		notok "$k: apt install $debs (log $log)"
		tail_log "$log" 30
		return 1
	fi
	note "$k: packages installed (dkms built the module) after $((SECONDS - t0)) s"
	# what dkms printed while building, for the record
	sed -n '/Loading new tcptw/,/DKMS: install completed\|depmod/p' "$log" | head -n 40 | sed 's/^/#   /'

	local st dk
	st=$(in_chroot "$dir/root" "dkms status tcptw" 2>>"$log")
	note "$k: dkms status: $st"
	# 3.0: "tcptw/V, REL, x86_64: installed"; 2.8: "tcptw, V, REL, x86_64: installed"
	if grep -Eq "^tcptw(/|, )$v, $r, [^:]*: installed" <<<"$st"; then
		ok "$k: dkms status says tcptw $v is installed for $r"
	else
		notok "$k: dkms status says tcptw $v is installed for $r"
	fi
	ko[$k]=$dir/root/lib/modules/$r/updates/dkms/tcptw.ko
	check "$k: tcptw.ko under /lib/modules/$r/updates/dkms/" test -f "${ko[$k]}"
	# dkms >= 3 signs with the key it made, /var/lib/dkms/mok.key (what
	# docs/install.md's Secure Boot section enrolls); 2.8 does not sign
	local signer
	signer=$(modinfo -F signer "${ko[$k]}" 2>&1)
	if [ "$suite" = bullseye ]; then
		note "$k: module signer: '$signer' (dkms 2.8 does not sign)"
	elif [ "$signer" = "DKMS module signing key" ] &&
		[ -f "$dir/root/var/lib/dkms/mok.pub" ]; then
		ok "$k: dkms signed tcptw.ko with its key (/var/lib/dkms/mok.pub)"
	else
		notok "$k: dkms signed tcptw.ko with its key (signer: '$signer')"
	fi

	local cv mi dp dk want
	mi=$(modinfo -F version "${ko[$k]}" 2>&1)
	dk=$(in_chroot "$dir/root" "sed -n 's/^PACKAGE_VERSION=//p' /usr/src/tcptw-$v/dkms.conf" 2>&1)
	if [ "$cli" = 1 ]; then
		cv=$(in_chroot "$dir/root" "tcptw --version" 2>&1)
		dp=$(in_chroot "$dir/root" "dpkg-query -W -f '\${Version} ' tcptw tcptw-dkms" 2>&1)
		want="tcptw $v/$v/$v $v /\"$v\""
	else
		cv="(no CLI)"
		dp=$(in_chroot "$dir/root" "dpkg-query -W -f '\${Version} ' tcptw-dkms" 2>&1)
		want="(no CLI)/$v/$v /\"$v\""
	fi
	note "$k: tcptw --version: '$cv'; modinfo version: '$mi'; dpkg: '$dp'; dkms.conf: $dk"
	local what="tcptw --version, the module, dpkg and dkms.conf all say $v (debian/changelog)"
	[ "$cli" = 1 ] || what="the module, dpkg and dkms.conf say $v (debian/changelog; no CLI)"
	if [ "$cv/$mi/$dp/$dk" = "$want" ] &&
		[ "$v" = "$("$REPO/scripts/version.sh" | sed 's/+g.*//')" ]; then
		ok "$k: $what"
	else
		notok "$k: $what"
	fi
	if [ "$cli" = 0 ]; then
		skip "$k: man -w tcptw" "$nocli"
		skip "$k: systemd-analyze verify tcptw-export.timer" "$nocli"
		skip "$k: tcptw-export.timer is disabled after the install" "$nocli"
		in_chroot "$dir/root" "dpkg -L tcptw-dkms" >"$dir/dpkg-L.txt" 2>>"$log"
		note "$k: install phase done in $((SECONDS - t0)) s"
		return 0
	fi
	if in_chroot "$dir/root" "man -w tcptw" >>"$log" 2>&1; then
		ok "$k: man -w tcptw"
	else
		notok "$k: man -w tcptw"
	fi
	local sa
	# bullseye's systemd (247) wants the cgroup hierarchy under /sys
	if sa=$(TCPTW_CHROOT_SYS=1 in_chroot "$dir/root" "systemd-analyze verify /lib/systemd/system/tcptw-export.timer /lib/systemd/system/tcptw-export.service" 2>&1) &&
		! grep -q tcptw <<<"$sa"; then
		ok "$k: systemd-analyze verify tcptw-export.timer"
	else
		notok "$k: systemd-analyze verify tcptw-export.timer"
	fi
	[ -z "$sa" ] || sed 's/^/#   /' <<<"$sa"
	local en
	en=$(in_chroot "$dir/root" "systemctl is-enabled tcptw-export.timer" 2>&1)
	if [ "$en" = disabled ]; then
		ok "$k: tcptw-export.timer is disabled after the install"
	else
		notok "$k: tcptw-export.timer is disabled after the install (is-enabled: $en)"
	fi
	# what the timer's service runs, into a directory of its own (the
	# module is not loaded here: the export says so, and still succeeds)
	local tf trc
	tf=$(in_chroot "$dir/root" "rm -rf /tmp/textfile && mkdir /tmp/textfile &&
		timeout 30 /usr/libexec/tcptw/tcptw-export /tmp/textfile 2>/tmp/export.err &&
		ls -A /tmp/textfile &&
		grep -c -E '^tcptw_module_loaded(\\{.*\\})? 0\$' /tmp/textfile/tcptw.prom
		rc=\$?; cat /tmp/export.err >&2; rm -rf /tmp/textfile /tmp/export.err; exit \$rc" 2>"$dir/export.err")
	trc=$?
	if [ "$(printf '%s' "$tf" | tr '\n' ' ')" = "tcptw.prom 1" ]; then
		ok "$k: tcptw-export writes tcptw.prom, and nothing else, into a textfile directory"
	else
		notok "$k: tcptw-export writes tcptw.prom, and nothing else, into a textfile directory (exit $trc$([ $trc -ne 124 ] || echo ": tcptw export hung for 30 s"))"
		cat - "$dir/export.err" <<<"$tf" | head -n 10 | sed 's/^/#   /'
	fi
	# what the purge must take away, recorded now
	in_chroot "$dir/root" "dpkg -L tcptw tcptw-dkms" >"$dir/dpkg-L.txt" 2>>"$log"
	note "$k: install phase done in $((SECONDS - t0)) s"
}

# phase 2: boot K with the installed tcptw.ko
vm_phase() {
	local k=$1 log=$LOGS/deb-test-$1-vm.log t0=$SECONDS rc v=${ver_of[$1]} loaded
	if [ $vm -eq 0 ] || [ -n "${novm[$k]:-}" ]; then
		skip "$k: tcptw_nat_paws.sh with the dkms-installed tcptw.ko in a guest" "--no-vm given"
		return
	fi
	# the guest sees the host's files: the .ko is read where dkms put it
	"$REPO/scripts/vng-run.sh" "$k" "selftests/run_vm.sh $(printf '%q' "${ko[$k]}") tcptw_nat_paws.sh; rc=\$?; dmesg | grep -E 'tcptw: (loaded|module verification)' | sed 's/^/# dmesg: /'; exit \$rc" \
		>"$log" 2>&1
	rc=$?
	note "$k: guest exited $rc after $((SECONDS - t0)) s (log $log)"
	grep -E '^# run_vm: kernel|^(not )?ok .*tcptw_nat_paws|^# dmesg:|^# tcptw_nat_paws.sh: [0-9]+ s' "$log" | sed 's/^#* */#   /'
	loaded=$(grep -c "tcptw: loaded ($v)" "$log")
	if [ $rc -eq 0 ] && grep -q '^ok .*tcptw_nat_paws.sh$' "$log" && [ "$loaded" -ge 1 ]; then
		ok "$k: tcptw_nat_paws.sh passes with the dkms-installed tcptw.ko (loaded ($v))"
	else
		notok "$k: tcptw_nat_paws.sh passes with the dkms-installed tcptw.ko (exit $rc, 'loaded ($v)' seen $loaded times, log $log)"
		grep -E '^# (# )* *(FAIL:|not ok)' "$log" | head -n 30 | sed 's/^/#   /'
		tail -n 10 "$log" | sed 's/^/#   /'
	fi
}

# phase 3: purge, and look for anything left
purge_phase() {
	local k=$1 dir=$CACHE/deb-test/$1 log=$LOGS/deb-test-$1.log r=${rel[$1]} v=${ver_of[$1]} left
	local pkgs="tcptw tcptw-dkms"
	[ "${cli_of[$k]}" = 1 ] || pkgs=tcptw-dkms
	if ! in_chroot "$dir/root" "apt-get purge -y -q $pkgs" >>"$log" 2>&1; then
		notok "$k: apt purge $pkgs (log $log)"
		tail_log "$log"
		return
	fi
	rm -rf "$dir/root/root/debs"
	# Every path dpkg listed, dkms' own files, anything named *tcptw*.
	# Directories of dpkg -L that others share (/usr/share/doc, /lib)
	# stay; one of ours left over is named *tcptw*, and a file in it
	# counts anyway. /var/cache/man is man-db's cache of formatted pages:
	# `man tcptw` (here systemd-analyze's Documentation= check) puts one
	# there, as for any page.
	left=$( {
		cat "$dir/dpkg-L.txt"
		echo "/var/lib/dkms/tcptw"
		echo "/usr/src/tcptw-$v"
		echo "/lib/modules/$r/updates/dkms/tcptw.ko"
		(cd "$dir/root" && find . -xdev -name '*tcptw*' -not -path './proc/*' \
			-not -path './var/cache/man/*' | sed 's/^\.//')
	} | sort -u | while read -r p; do
		if [ -z "$p" ] || [ "$p" = /. ]; then
			continue
		fi
		[ -e "$dir/root$p" ] || [ -L "$dir/root$p" ] || continue
		if [ -d "$dir/root$p" ] && [[ ${p##*/} != *tcptw* ]]; then
			continue
		fi
		echo "$p"
	done)
	if [ -z "$left" ]; then
		ok "$k: apt purge $pkgs leaves nothing behind ($(wc -l <"$dir/dpkg-L.txt") paths of dpkg -L, dkms' tree, the .ko)"
	else
		notok "$k: apt purge $pkgs leaves nothing behind"
		sed 's/^/#   left: /' <<<"$left" | head -n 30
	fi
}

t_all=$SECONDS
todo=()
declare -A novm
for k in "$@"; do
	if [[ $k == *:novm ]]; then
		k=${k%:novm}
		novm[$k]=1
	fi
	if ! suite=$(suite_of "$k"); then
		skip "$k: package install test" "no chroot suite for $k: the test covers 6.1 (bookworm) and 5.10 (bullseye, dkms 2.8.4)"
		continue
	fi
	t0=$SECONDS
	if install_phase "$k" "$suite"; then
		todo+=("$k")
	fi
	note "$k: chroot work took $((SECONDS - t0)) s"
done
for k in "${todo[@]}"; do
	vm_phase "$k"
	purge_phase "$k"
done
note "deb-test.sh: $((SECONDS - t_all)) s in all"
exit $failed
