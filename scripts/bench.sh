#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh [K]: what watching costs, counted in guest instructions, in one
# guest boot of kernel K (default 6.1): seven workloads
# (scripts/bench_vm.py), each without the module, with it, and with
# scripts/tcptw.bt (bpftrace on the same functions), alternating, ROUNDS
# (default 5) times. QEMU runs with the TCG plugin scripts/insn-count.c,
# built here into .cache/bench/; each workload marks the start and end of
# its measured loop and the plugin writes the instruction totals at the
# marks into .cache/bench/, where the guest reads them. Prints the table of
# instructions per unit of work and their ratios (time-based ratios
# beside them) and writes it as JSON in .cache/bench-<release>.json. Not a
# test: it gates nothing. docs/bench.md has the method and the figures.
#
# Environment: ROUNDS, BENCH_ONLY (a comma list of workloads),
# BENCH_SCALE (multiplies every phase's size; 0.1 for a dry run),
# BENCH_MODES (a comma list of off, tcptw, bpftrace), BENCH_PROF=1 (a
# profile per phase: scripts/insn-prof.py says where the instructions a
# mode adds are, by function),
# BENCH_ICOUNT (QEMU's -icount setting, default shift=3,sleep=on; empty:
# guest time is real time),
# VM_BASE_APPEND (default empty here: no slub_debug or poisoning, whose
# cost would dilute what is measured), VM_CPUS (default 1 here: with two
# vCPUs, client and server ping-pong across CPUs and how often each goes
# idle and is woken depends on timing, which moved a phase's count by up
# to 10%), and vng-run.sh's.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
k=${1:-6.1}
rounds=${ROUNDS:-5}
case $rounds in '' | *[!0-9]*) echo "bench.sh: ROUNDS must be a number" >&2; exit 2 ;; esac
scale=${BENCH_SCALE:-1}
case $scale in '' | *[!0-9.]*) echo "bench.sh: BENCH_SCALE must be a number" >&2; exit 2 ;; esac

scripts/deps.sh
scripts/kernels.sh fetch "$k"
built=$(scripts/build-kmod.sh "$k" '' | tail -n 1)
make -C selftests >/dev/null

# the module measured is a copy: a rebuild from a tree being edited must
# not swap it between rounds
bdir=$REPO/.cache/bench
mkdir -p "$bdir"
ko=$bdir/tcptw-$k.ko
cp "$built" "$ko"
kmod_commit=$(git log -1 --format=%h -- kmod Kbuild 2>/dev/null || echo unknown)
git diff --quiet HEAD -- kmod Kbuild 2>/dev/null || kmod_commit+=-dirty

# the plugin: plain C, no QEMU or glib headers needed
plugin=$bdir/insn-count.so
if [ ! -e "$plugin" ] || [ scripts/insn-count.c -nt "$plugin" ]; then
	gcc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
		-o "$plugin" scripts/insn-count.c
fi
marks=$bdir/marks-$k.$$.log
: >"$marks"
trap 'rm -f "$marks"' EXIT

export VM_BASE_APPEND=${VM_BASE_APPEND-}
export VM_CPUS=${VM_CPUS:-1}
# Guest time follows the instruction count, not the host's clock: under
# real time a loaded host stretches a phase and the guest's tick, timers
# and RCU run more often per unit of work (a phase's count moved by 5%
# when other guests started beside it). icount needs one vCPU (no MTTCG).
icount=${BENCH_ICOUNT-shift=3,sleep=on}
export VM_QEMU_OPTS="${VM_QEMU_OPTS:-}${icount:+ -icount $icount}"
# BENCH_PROF=1: a per-block profile at each mark, and the guest's symbols,
# under .cache/bench/prof-K/ (scripts/insn-prof.py reads them)
prof=
if [ -n "${BENCH_PROF:-}" ]; then
	pdir=$bdir/prof-$k
	rm -rf "$pdir"
	mkdir -p "$pdir"
	prof=",prof=$pdir/p"
fi
export VM_QEMU_OPTS="${VM_QEMU_OPTS# } -plugin $plugin,out=$marks$prof"
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
qemu=$(qemu-system-x86_64 --version | sed -n '1s/^QEMU emulator version //p')
meta=$(printf '{"commit": "%s", "kmod_commit": "%s", "qemu": "%s", "icount": "%s"}' \
	"$commit" "$kmod_commit" "$qemu" "$icount")
# about 6 minutes a round, bpftrace's start included, more on a busy host
export VM_TIMEOUT=${VM_TIMEOUT:-$((900 + 720 * rounds))}
rc=0
scripts/vng-run.sh "$k" \
	"scripts/bench_vm.py $(printf '%q' "$ko") --rounds $rounds --scale $scale --marks $(printf '%q' "$marks") --meta $(printf '%q' "$meta")${BENCH_ONLY:+ --only $BENCH_ONLY}${BENCH_MODES:+ --modes $BENCH_MODES}${prof:+ --kallsyms $(printf '%q' "$pdir/kallsyms")}" || rc=$?
exit "$rc"
