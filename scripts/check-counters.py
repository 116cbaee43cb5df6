#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-counters.py: the counters are written once, and what describes
them follows.

The source is kmod/uapi/tcptw_counters.h (TCPTW_COUNTER(ID, "Name",
"how", "help") in the order of /proc/net/tcptw/counters). Checked against it:
  - no two entries share an ID or a name; every "how" is known;
  - no C file of kmod/ or userspace/ (their tests aside) writes a counter's
    name as a string: they take it from the list (TCPTW_<ID>, CTR(<ID>));
  - docs/proc-format.md's counters table lists every name, in ABI order;
  - docs/design.md's counter table has a row for every name (a row may
    name several, or end a prefix with `*`), and its "From" cell says
    what the list's "how" says (a MIB, a hook, the tracepoint, a MIB less
    a hook's count).
The same for the event types of kmod/uapi/tcptw_events.h: unique,
docs/proc-format.md's events table in their order, and the CLI's
name_peers() calls taking them from the list (EV(<ID>)).
Prints what differs; exit 1 if anything does. --repo DIR checks another
tree (its tests point it at a copy with a fact changed).
"""
import argparse
import os
import re
import sys

HEADER = "kmod/uapi/tcptw_counters.h"
EVENTS = "kmod/uapi/tcptw_events.h"
# how -> a word the design table's "From" cell must have for it
HOW_WORD = {"mib": "MIB", "hook": "hook", "tracepoint": "tracepoint",
            "combined": "less", "stat": "insert_failed",
            "tcptw": "not a decision"}


def read(repo, path):
    with open(os.path.join(repo, path)) as f:
        return f.read()


def entries(repo):
    """[(ID, Name, how, help)] in ABI order"""
    text = re.sub(r"/\*.*?\*/", "", read(repo, HEADER), flags=re.S)
    return re.findall(r'^TCPTW_COUNTER\((\w+),\s*"(\w+)",\s*"([^"]*)",'
                      r'\s*"((?:[^"\\]|\\.)*)"\)', text, re.M)


def events(repo):
    """[(ID, name)] in ABI order"""
    text = re.sub(r"/\*.*?\*/", "", read(repo, EVENTS), flags=re.S)
    return re.findall(r'^TCPTW_EVENT\((\w+),\s*"(\w+)"\)', text, re.M)


def section(text, start, stop):
    i = text.index(start)
    j = text.find(stop, i + len(start))
    return text[i:j if j >= 0 else len(text)]


def dupes(where, names, what):
    """one line per name NAMES holds more than once"""
    return [f"{where}: {n} {what} {names.count(n)} times"
            for i, n in enumerate(names)
            if names.count(n) > 1 and names.index(n) == i]


def table_order(repo, title, pattern, names, what):
    """docs/proc-format.md's table under TITLE lists NAMES in their order"""
    text = section(read(repo, "docs/proc-format.md"), title, "\n### ")
    doc = re.findall(pattern, text, re.M)
    if doc == names:
        return []
    missing = [n for n in names if n not in doc]
    extra = [n for n in doc if n not in names]
    return [f"docs/proc-format.md: the {what} table is not the list in its "
            f"order (missing {missing}, not {what} {extra})"]


def c_files(repo):
    for d in ("kmod", "userspace"):
        for root, dirs, files in os.walk(os.path.join(repo, d)):
            dirs[:] = [x for x in dirs if x not in ("tests", "uapi")]
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(root, f), repo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    repo = ap.parse_args().repo
    bad = []
    ents = entries(repo)
    order = [e[1] for e in ents]
    if not ents:
        bad.append(f"{HEADER}: no TCPTW_COUNTER_LIST entries")
    bad += dupes(HEADER, order, "names a counter")
    bad += dupes(HEADER, [e[0] for e in ents], "is the ID of a counter")
    how = {}
    for e in ents:
        how[e[1]] = e[2].split("/")
        for h in how[e[1]]:
            if h not in HOW_WORD:
                bad.append(f"{HEADER}: {e[1]}: unknown how {h!r}")
    known = set(order)

    # no name by hand in the C sources
    for path in sorted(c_files(repo)):
        text = read(repo, path)
        for n in sorted(set(re.findall(r'"([A-Za-z0-9]+)"', text)) & known):
            bad.append(f"{path}: writes \"{n}\" by hand (use the list)")

    # docs/proc-format.md: the counters table, in ABI order
    bad += table_order(repo, "### counters", r"^\| `([A-Za-z0-9]+)` \|",
                       order, "counters")

    # docs/design.md: a row for each, its "From" agreeing with "how"
    rows = re.findall(r"^\| (`[^|]+) \| ([^|]+) \|",
                      read(repo, "docs/design.md"), re.M)
    for n in order:
        cells = [frm for r, frm in rows
                 for c in re.findall(r"`([A-Za-z0-9*]+)`", r)
                 if n == c or (c.endswith("*") and n.startswith(c[:-1]))]
        if not cells:
            bad.append(f"docs/design.md: no row for {n} in the counter table")
            continue
        for h in how.get(n, []):
            if h in HOW_WORD and HOW_WORD[h] not in cells[0]:
                bad.append(f"docs/design.md: {n}'s row does not say "
                           f"{HOW_WORD[h]!r} ({HEADER}: {h})")

    # the event types
    evs = events(repo)
    enames = [e[1] for e in evs]
    if not evs:
        bad.append(f"{EVENTS}: no TCPTW_EVENT entries")
    bad += dupes(EVENTS, enames, "names an event type")
    bad += table_order(repo, "### events", r"^\| `([a-z0-9_]+)` \|",
                       enames, "events")
    diag = read(repo, "userspace/diagnose.c")
    for n in re.findall(r'name_peers\(f, in, "(\w+)"', diag):
        bad.append(f"userspace/diagnose.c: event {n} written by hand "
                   "(use EV())")

    for b in bad:
        print(b)
    print(f"{len(order)} counters, {len(enames)} event types, "
          f"{len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
