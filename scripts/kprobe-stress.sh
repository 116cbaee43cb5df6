#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kprobe-stress.sh K [CYCLES] [MODE]
#
# A reproducer, not a tcptw test: boot kernel K (a name
# from `kernels.sh list`) under QEMU/TCG and run selftests/kprobe_stress.sh,
# which toggles tracefs kprobe events (MODE r = kretprobes, p = kprobes,
# rp = both; default rp) on tcptw's hook sites CYCLES times (default 100)
# under NAT+PAWS traffic, with tcptw unloaded. Exit 0 if the kernel
# survived every cycle with a clean log. This is how the "7.2 panics on
# reload" (docs/testing.md: Known limits) was traced to QEMU: on
# bookworm's QEMU 7.2 (TCG) 6.12 and 7.2 guests die here within about 100
# cycles, on QEMU 10 they do not.
# VM_QEMU_BIN=/path/to/qemu-system-x86_64 picks the QEMU
# (an older one may also need QEMU_MODULE_DIR for its accel-tcg module).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 1 ] || { sed -n '4,17s/^# \{0,1\}//p' "$0" >&2; exit 2; }
k=$1
cycles=${2:-100}
mode=${3:-rp}
[[ $cycles =~ ^[1-9][0-9]*$ ]] || { echo "kprobe-stress.sh: CYCLES must be a positive number, not '$cycles'" >&2; exit 2; }
case $mode in
r | p | rp | pr) ;;
*) echo "kprobe-stress.sh: MODE must be r, p or rp, not '$mode'" >&2; exit 2 ;;
esac
make -s -C "$REPO/selftests" all
cd "$REPO"
# a cycle takes 1-3 s under TCG: stretch run_tests.sh's 400 s bound
export TCPTW_TIMEOUT_MULT=$((cycles * 4 / 400 + 1))
export VM_TIMEOUT=${VM_TIMEOUT:-$((cycles * 4 + 600))}
exec scripts/vng-run.sh "$k" "cd selftests && KPROBE_STRESS_CYCLES=$cycles KPROBE_STRESS_MODE=$mode ./run_tests.sh kprobe_stress.sh"
