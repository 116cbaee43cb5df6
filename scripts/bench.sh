#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh [K]: what watching costs, measured side by side in one guest
# boot of kernel K (default 6.1): six workloads (scripts/bench_vm.py),
# each without the module, with it, and with scripts/tcptw.bt (bpftrace
# on the same functions), alternating, ROUNDS (default 5) times. Prints
# the table of medians and ratios and writes it as JSON in .cache/. Not a
# test: it gates nothing and reports ratios, never absolute rates (TCG is
# slow and noisy; only ratios within one boot mean something).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
k=${1:-6.1}
rounds=${ROUNDS:-5}
case $rounds in '' | *[!0-9]*) echo "bench.sh: ROUNDS must be a number" >&2; exit 2 ;; esac

scripts/deps.sh
scripts/kernels.sh fetch "$k"
ko=$(scripts/build-kmod.sh "$k" '' | tail -n 1)
make -C selftests >/dev/null
# about 4 minutes a round under TCG, bpftrace's start included
export VM_TIMEOUT=${VM_TIMEOUT:-$((600 + 360 * rounds))}
exec scripts/vng-run.sh "$k" \
	"scripts/bench_vm.py $(printf '%q' "$ko") --rounds $rounds ${BENCH_ONLY:+--only $BENCH_ONLY}"
