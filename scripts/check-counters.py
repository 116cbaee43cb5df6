#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-counters.py: the counters' ABI, written in more than one place,
says the same everywhere.

The source is kmod/counters.h (enum tcptw_counter: the order of
/proc/net/tcptw/counters) with kmod/proc.c (each one's name). Checked
against it:
  - every enum member has a name, and no two share one;
  - docs/proc-format.md's counters table lists every name, in ABI order;
  - docs/design.md's counter table has a row for every name (a row may
    name several, or end a prefix with `*`);
  - userspace/prom.c has a HELP for every name (TwReuseDenied* are one
    family with a reason label) and none for a name that is gone;
  - every counter userspace/diagnose.c reads (mod_delta(in, "Name")) is
    a name.
Prints what differs; exit 1 if anything does. --repo DIR checks another
tree (its tests point it at a copy with a fact changed).
"""
import argparse
import os
import re
import sys


def read(repo, path):
    with open(os.path.join(repo, path)) as f:
        return f.read()


def abi(repo):
    """(enum members in order, {member: name})"""
    hdr = read(repo, "kmod/counters.h")
    body = re.search(r"enum tcptw_counter \{(.*?)\};", hdr, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    members = [m for m in re.findall(r"\b(TCPTW_[A-Z0-9_]+)\b", body)
               if m != "TCPTW_NR_COUNTERS"]
    proc = read(repo, "kmod/proc.c")
    names = dict(re.findall(r'\[(TCPTW_[A-Z0-9_]+)\] = "([A-Za-z0-9]+)"',
                            proc.split("tcptw_hist_names")[0]))
    return members, names


def section(text, start, stop):
    i = text.index(start)
    j = text.find(stop, i + len(start))
    return text[i:j if j >= 0 else len(text)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    repo = ap.parse_args().repo
    bad = []
    members, names = abi(repo)
    order = []
    for m in members:
        if m not in names:
            bad.append(f"kmod/proc.c: no name for {m}")
        else:
            order.append(names[m])
    for n in set(order):
        if order.count(n) > 1:
            bad.append(f"kmod/proc.c: {n} names {order.count(n)} counters")
    known = set(order)

    # docs/proc-format.md: the counters table, in ABI order
    pf = section(read(repo, "docs/proc-format.md"), "### counters", "\n### ")
    doc = re.findall(r"^\| `([A-Za-z0-9]+)` \|", pf, re.M)
    if doc != order:
        missing = [n for n in order if n not in doc]
        extra = [n for n in doc if n not in known]
        bad.append("docs/proc-format.md: the counters table is not the ABI "
                   f"in its order (missing {missing}, not counters {extra})")

    # docs/design.md: a row for each
    rows = re.findall(r"^\| (`[^|]+) \|", read(repo, "docs/design.md"), re.M)
    cells = [c for r in rows for c in re.findall(r"`([A-Za-z0-9*]+)`", r)]
    for n in order:
        if not any(n == c or (c.endswith("*") and n.startswith(c[:-1]))
                   for c in cells):
            bad.append(f"docs/design.md: no row for {n} in the counter table")

    # userspace/prom.c: a HELP for each
    prom = read(repo, "userspace/prom.c")
    table = section(prom, "ctr_help[][2] = {", "};")
    helped = re.findall(r'\{ "([A-Za-z0-9]+)",', table)
    for n in order:
        if n.startswith("TwReuseDenied"):
            continue
        if n not in helped:
            bad.append(f"userspace/prom.c: no HELP for {n}")
    for n in helped:
        if n not in known:
            bad.append(f"userspace/prom.c: HELP for {n}, not a counter")

    # userspace/diagnose.c: the counters it reads exist
    diag = read(repo, "userspace/diagnose.c")
    for n in sorted(set(re.findall(r'mod_delta\(in, "([A-Za-z0-9]+)"',
                                   diag))):
        if n not in known:
            bad.append(f"userspace/diagnose.c: reads {n}, not a counter")

    for b in bad:
        print(b)
    print(f"{len(order)} counters, {len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
