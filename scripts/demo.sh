#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh [--examples] [K]: the NAT + PAWS reproduction in a guest of
# kernel K (default 6.1). Installs deps, fetches K, builds tcptw.ko in
# place, builds userspace and selftests, then
# boots K and runs selftests/demo_vm.sh <repo>/tcptw.ko. Exits with the
# guest's exit code (125 if the VM itself failed).
# --examples (`make examples`): runs selftests/examples_vm.sh instead, which
# writes real output of every tcptw command into docs/examples/, then
# scripts/gen-examples.py puts it into docs/tcptw.8 and README.md.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
examples=0
if [ "${1:-}" = --examples ]; then
	examples=1
	shift
fi
k=${1:-6.1}

die() { echo "demo.sh: $*" >&2; exit 1; }

scripts/deps.sh
scripts/kernels.sh fetch "$k"
ko=$(scripts/build-kmod.sh "$k" "$REPO" | tail -n 1)
[ -f "$ko" ] || die "no tcptw.ko after the build"

make -C userspace || echo "demo.sh: userspace did not build; the demo runs without the CLI" >&2
make -C selftests || die "selftests did not build"

if [ $examples = 0 ]; then
	exec scripts/vng-run.sh "$k" "selftests/demo_vm.sh $(printf '%q' "$ko")"
fi
rm -rf docs/examples.new
mkdir -p docs/examples.new
scripts/vng-run.sh "$k" "selftests/examples_vm.sh $(printf '%q' "$ko") $REPO/docs/examples.new"
for f in no-module stat watch sockets events peers listeners diagnose export \
	run conntrack; do
	[ -s "docs/examples.new/$f.txt" ] || die "the guest wrote no $f.txt"
done
# only what the guest wrote: the seeds' examples come from their tests
mv docs/examples.new/*.txt docs/examples/
rmdir docs/examples.new
scripts/gen-examples.py
