#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# seeds.sh [KERNEL]: `make seeds`. The field reports at their own numbers
# with their own tools (selftests/tcptw_seed_*.sh: ab, wrk, nginx,
# php-fpm) in one guest of KERNEL (default 6.1), with
# TCPTW_SEEDS_AT_LOAD=1, which runs them on kernels make check leaves
# out for time (require_seeds_at_load in selftests/lib_mib.sh), and seed
# 001 at the report's shape (TCPTW_SEED001_FULL=1). With
# TCPTW_EXAMPLES_DIR=docs/examples the scripts recapture their examples.
# Log in .cache/logs/seeds-KERNEL.log. Exit 0 iff every script passed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
cd "$REPO" || exit 1
k=${1:-6.1}
log=$CACHE/logs/seeds-$k.log
mkdir -p "$CACHE/logs"

scripts/deps.sh >/dev/null || exit 1
make -s -C userspace tcptw || exit 1
make -s -C selftests || exit 1
ko=$(scripts/build-kmod.sh "$k" '' | tail -n 1) || exit 1
env_vars="TCPTW_SEEDS_AT_LOAD=1 TCPTW_SEED001_FULL=1"
[ -n "${TCPTW_EXAMPLES_DIR:-}" ] &&
	env_vars+=" TCPTW_EXAMPLES_DIR=$(cd "$TCPTW_EXAMPLES_DIR" && pwd)"
mapfile -t seeds < <(cd selftests && ls tcptw_seed_*.sh)
scripts/vng-run.sh "$k" "$env_vars selftests/run_vm.sh $ko ${seeds[*]}" \
	>"$log" 2>&1
rc=$?
grep -E '^(ok|not ok)|# (ok|not ok) [0-9]|FAIL:|missed' "$log"
echo "log: $log"
exit $rc
