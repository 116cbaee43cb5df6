#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deps.sh: install what building and testing tcptw needs on a Debian 12 host
# (root). Idempotent and a fast no-op when everything is present: packages
# are checked with dpkg-query / command -v before apt or pip is called.
# Prints one line per thing it installs. Kernels are not installed here;
# scripts/kernels.sh fetches them into .cache/.
set -euo pipefail

APT_PKGS=(
	# VM runner and guest tools
	qemu-system-x86 busybox-static iproute2 nftables conntrack kmod udev
	nginx-light wrk tcpdump python3-scapy python3-dpkt jq
	# the seeds' own tools (selftests/tcptw_seed_*.sh) and make bench
	apache2-utils php8.2-fpm bpftrace ipvsadm
	# the fleet view end to end (selftests/tcptw_prometheus.sh)
	prometheus prometheus-node-exporter curl
	# module build (kbuild host tools, BTF for 6.12, sparse)
	gcc make bc bison flex libelf-dev libssl-dev pkg-config pahole sparse
	clang libclang-rt-14-dev xz-utils
	# userspace CLI and its unit tests
	libmnl-dev libcmocka-dev libnetfilter-conntrack-dev
	# style
	codespell shellcheck
	# make deb, and the packages' install test in a chroot (deb-test.sh)
	debhelper dh-dkms lintian debootstrap
)

log() { echo "deps.sh: $*"; }
die() { echo "deps.sh: $*" >&2; exit 1; }

sudo=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "must run as root (or with sudo available)"
	sudo=sudo
fi

missing=()
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${APT_PKGS[@]}" 2>/dev/null |
	awk '$2 == "ii" { print $1 }') || true
for p in "${APT_PKGS[@]}"; do
	grep -qxF "$p" <<<"$installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	for p in "${missing[@]}"; do
		log "installing apt package $p"
	done
	export DEBIAN_FRONTEND=noninteractive
	apt_opts=(-o DPkg::Lock::Timeout=600 -q)
	# A fresh machine may have empty or stale lists.
	$sudo apt-get "${apt_opts[@]}" update >&2 || die "apt-get update failed"
	$sudo apt-get "${apt_opts[@]}" install -y --no-install-recommends \
		"${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
fi

# QEMU: bookworm's 7.2 lets a TCG guest run code its kernel has just
# patched back (ftrace, kprobes, jump labels): the guest dies on an int3
# nobody placed or a jump to 0, on every kernel here (docs/testing.md;
# scripts/kprobe-stress.sh reproduces it). QEMU 10 from bookworm-backports
# does not; only its four qemu/seabios packages move, nothing else.
qemu_major() {
	qemu-system-x86_64 --version 2>/dev/null |
		sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p'
}
qemu_have=$(qemu_major)
if [ "${qemu_have:-0}" -lt 10 ]; then
	log "installing qemu-system-x86 from bookworm-backports (have QEMU ${qemu_have:-none}, need >= 10)"
	$sudo "$(dirname "${BASH_SOURCE[0]}")/kernels.sh" suite bookworm-backports >&2
	$sudo apt-get -o DPkg::Lock::Timeout=600 -q install -y --no-install-recommends \
		-t bookworm-backports qemu-system-x86 >&2 ||
		die "apt-get install -t bookworm-backports qemu-system-x86 failed"
	[ "$(qemu_major)" -ge 10 ] 2>/dev/null ||
		die "QEMU is still $(qemu_major) after the install"
fi

# virtme-ng is not packaged in bookworm: pip (pyenv's pip on these hosts).
if ! command -v vng >/dev/null; then
	log "installing pip package virtme-ng"
	py=$(command -v python3) || die "python3 not found"
	pip_opts=(-q)
	# Debian's own python refuses pip installs without this (PEP 668).
	case $(readlink -f "$py") in
	/usr/bin/*) pip_opts+=(--break-system-packages) ;;
	esac
	$sudo "$py" -m pip install "${pip_opts[@]}" virtme-ng >&2 ||
		die "pip install virtme-ng failed"
	command -v pyenv >/dev/null && pyenv rehash 2>/dev/null
	hash -r
	if ! command -v vng >/dev/null; then
		bin=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/vng
		[ -x "$bin" ] || bin=$HOME/.local/bin/vng
		[ -x "$bin" ] || die "virtme-ng installed but no vng script found"
		log "linking $bin into /usr/local/bin"
		$sudo ln -sf "$bin" /usr/local/bin/vng
	fi
	command -v vng >/dev/null || die "vng is still not on PATH"
fi
exit 0
