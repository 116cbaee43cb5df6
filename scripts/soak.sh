#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# soak.sh [KERNEL]: `make soak`. The full soak, selftests/tcptw_soak.sh
# with TCPTW_SOAK=full (1000 reloads, 2000 namespaces, 60 s floods, 10^5
# control writes, 20 NAT+PAWS runs), in one guest of KERNEL (default
# 6.1; the debug kernel where docs/testing.md says so), on a stock kernel
# with slub_debug=FZP page_poison=1 (TCPTW_POISON=1). Hours under TCG:
# bounded by VM_TIMEOUT (default 6 h). SOAK_* variables scale each part
# (see the script). The log goes to .cache/logs/soak-KERNEL.log; the last line
# printed is the soak's summary line. Exit 0 iff every part passed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
cd "$REPO" || exit 1
k=${1:-6.1}
log=$CACHE/logs/soak-$k.log
mkdir -p "$CACHE/logs"

scripts/deps.sh >/dev/null || exit 1
make -s -C selftests || exit 1
ko=$(scripts/build-kmod.sh "$k" '' | tail -n 1) || exit 1
env_vars="TCPTW_SOAK=full"
for v in SOAK_RELOADS SOAK_NETNS SOAK_FLOOD_S SOAK_WRITES SOAK_NAT_PAWS; do
	[ -n "${!v:-}" ] && env_vars+=" $v=${!v}"
done
# the per-script bound of run_tests.sh is settings' timeout times this;
# a stock kernel boots with its slab and page poisoning on (kernels.sh)
TCPTW_POISON=1 VM_TIMEOUT=${VM_TIMEOUT:-21600} TCPTW_TIMEOUT_MULT=${TCPTW_TIMEOUT_MULT:-50} \
	scripts/vng-run.sh "$k" "$env_vars selftests/run_vm.sh $ko tcptw_soak.sh" \
	>"$log" 2>&1
rc=$?
grep -E '^(ok|not ok)|# (ok|not ok) [0-9]|FAIL:' "$log"
summary=$(grep -o 'soak: kernel .*' "$log" | tail -n 1)
echo "log: $log"
echo "${summary:-soak: no summary line (exit $rc)}"
exit $rc
