#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh [K]: what the module costs on the paths it hooks, measured side
# by side in one guest boot of kernel K (default 6.1). Not a test: it
# gates nothing and reports ratios, never absolute times (TCG is slow and
# noisy; only the ratio between runs of the same boot means something).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
k=${1:-6.1}

scripts/deps.sh
scripts/kernels.sh fetch "$k"
ko=$(scripts/build-kmod.sh "$k" '' | tail -n 1)
make -C selftests >/dev/null
exec scripts/vng-run.sh "$k" "scripts/bench_vm.sh $(printf '%q' "$ko")"
