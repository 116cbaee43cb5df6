#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Copyright (C) 2026 The tcptw authors.
"""insn-prof.py [KERNEL] [--workload W] [--mode M] [--top N] [--func F]

Where the instructions a mode adds to a workload go, by guest function:
reads the profile `BENCH_PROF=1 make bench` left in .cache/bench/prof-K/
(the plugin's per-block counts at each mark, the guest's /proc/kallsyms
taken with tcptw loaded, and each phase's marks and units), sums each
phase's blocks into the function they start in, takes the median over
rounds of instructions per unit for `off` and for M (default tcptw), and
prints the functions whose count moved most, with the difference per unit.
A block is charged to the function it starts in: blocks rarely span two.
"""
import argparse
import bisect
import collections
import os
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_syms(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in "tTwW":
                continue
            name = p[2] + (" " + p[3] if len(p) > 3 else "")
            syms.append((int(p[0], 16), name))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def phase_profile(pdir, end_mark, addrs, names, func=None):
    by = collections.Counter()
    with open(os.path.join(pdir, f"p.{end_mark}")) as f:
        for line in f:
            va, n = line.split()
            va = int(va, 16)
            i = bisect.bisect_right(addrs, va) - 1
            if va < 0xffff800000000000:
                by["[user space]"] += int(n)
            elif func is None:
                by[names[i] if i >= 0 else "[unknown]"] += int(n)
            elif i >= 0 and names[i].split()[0] == func:
                by[f"{func}+{va - addrs[i]:#x}"] += int(n)
    return by


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel", nargs="?", default="6.1")
    ap.add_argument("--workload", default="exhaust")
    ap.add_argument("--mode", default="tcptw")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--func", help="one function's blocks, by offset "
                    "(objdump -d the .ko or vmlinux to read them)")
    a = ap.parse_args()
    pdir = os.path.join(REPO, ".cache", "bench", f"prof-{a.kernel}")
    syms = {None: load_syms(os.path.join(pdir, "kallsyms"))}
    per = {"off": [], a.mode: []}
    with open(os.path.join(pdir, "phases")) as f:
        for line in f:
            w, mode, rnd, _, end, units = line.split()
            if w != a.workload or mode not in per or int(end) == 0:
                continue
            # the module's symbols as that round's load placed them
            path = os.path.join(pdir, f"kallsyms.r{rnd}")
            key = rnd if mode == "tcptw" and os.path.exists(path) else None
            if key not in syms:
                syms[key] = load_syms(path)
            addrs, names = syms[key]
            prof = phase_profile(pdir, int(end), addrs, names, a.func)
            per[mode].append({k: v / int(units) for k, v in prof.items()})
    if not per["off"] or not per[a.mode]:
        sys.exit(f"no phases of {a.workload} for off and {a.mode} in {pdir}")
    keys = set().union(*per["off"], *per[a.mode])

    def med(mode, k):
        return statistics.median(p.get(k, 0.0) for p in per[mode])
    rows = [(med(a.mode, k) - med("off", k), med("off", k), med(a.mode, k),
             k) for k in keys]
    tot_off = statistics.median(sum(p.values()) for p in per["off"])
    tot_m = statistics.median(sum(p.values()) for p in per[a.mode])
    print(f"{a.workload}: instructions per unit, median of "
          f"{len(per['off'])}/{len(per[a.mode])} rounds: off {tot_off:,.0f}, "
          f"{a.mode} {tot_m:,.0f}, added {tot_m - tot_off:,.0f}")
    print(f"{'added':>9} {'off':>9} {a.mode:>9}  function")
    for d, o, m, k in sorted(rows, key=lambda r: -abs(r[0]))[:a.top]:
        print(f"{d:9.1f} {o:9.1f} {m:9.1f}  {k}")


if __name__ == "__main__":
    main()
