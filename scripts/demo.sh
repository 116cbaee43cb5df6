#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh [K]: the NAT + PAWS reproduction in a guest of kernel K (default
# 6.1). Installs deps, fetches K, builds tcptw.ko in place, builds userspace
# and selftests when their Makefiles exist, then boots K and runs
# selftests/demo_vm.sh <repo>/tcptw.ko. Exits with the guest's exit code
# (125 if the VM itself failed).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
k=${1:-6.1}

die() { echo "demo.sh: $*" >&2; exit 1; }

scripts/deps.sh
scripts/kernels.sh fetch "$k"
ko=$(scripts/build-kmod.sh "$k" "$REPO" | tail -n 1)
[ -f "$ko" ] || die "no tcptw.ko after the build"

if [ -f userspace/Makefile ]; then
	make -C userspace || echo "demo.sh: userspace did not build; the demo runs without the CLI" >&2
else
	echo "demo.sh: no userspace/Makefile yet; the demo runs without the CLI" >&2
fi
if [ -f selftests/Makefile ]; then
	make -C selftests || die "selftests did not build"
fi
[ -x selftests/demo_vm.sh ] || die "selftests/demo_vm.sh does not exist yet"

exec scripts/vng-run.sh "$k" "selftests/demo_vm.sh $(printf '%q' "$ko")"
