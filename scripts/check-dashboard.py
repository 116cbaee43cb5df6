#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# check-dashboard.py FILE [RULES_OUT]: the fields a dashboard JSON needs
# to import into current Grafana (11.x/12.x: schemaVersion 36..41 are
# migrated on load; what the import API refuses or renders empty
# without), as TAP-free messages on stderr and exit status 1 on the first
# file that lacks one. With RULES_OUT, also writes every panel query as a
# recording rule ($__rate_interval as 1m) for `promtool check rules`, so
# that each expression is checked as PromQL. Stdlib only.
import json
import re
import sys

PANEL_TYPES = {"timeseries", "stat", "gauge", "bargauge", "table",
               "heatmap", "text", "row", "state-timeline", "barchart"}


def fail(msg):
    print(f"check-dashboard: {msg}", file=sys.stderr)
    sys.exit(1)


def need(obj, key, kind, where):
    if key not in obj or not isinstance(obj[key], kind) or \
       (kind is str and not obj[key].strip()):
        fail(f"{where}: '{key}' missing or not a {getattr(kind, '__name__', kind)}")
    return obj[key]


def ds_ok(ds, where, variables):
    if not isinstance(ds, dict):
        fail(f"{where}: datasource must be an object {{type, uid}}")
    if ds.get("type") != "prometheus":
        fail(f"{where}: datasource type is not prometheus")
    uid = need(ds, "uid", str, where)
    m = re.fullmatch(r"\$\{?(\w+)\}?", uid)
    if m and m.group(1) not in variables:
        fail(f"{where}: datasource uid {uid} names no templating variable")


def main():
    if len(sys.argv) < 2:
        fail("usage: check-dashboard.py FILE [RULES_OUT]")
    with open(sys.argv[1]) as f:
        d = json.load(f)
    uid = need(d, "uid", str, "dashboard")
    if len(uid) > 40 or not re.fullmatch(r"[A-Za-z0-9_-]+", uid):
        fail(f"dashboard: uid '{uid}': at most 40 of [A-Za-z0-9_-]")
    need(d, "title", str, "dashboard")
    sv = need(d, "schemaVersion", int, "dashboard")
    if not 36 <= sv <= 41:
        fail(f"dashboard: schemaVersion {sv} outside 36..41 (Grafana 10-12)")
    variables = {v.get("name") for v in
                 d.get("templating", {}).get("list", [])}
    panels = need(d, "panels", list, "dashboard")
    if not panels:
        fail("dashboard: no panels")
    ids, cells, exprs = set(), set(), []
    for p in panels:
        where = f"panel {p.get('id')!r} {p.get('title')!r}"
        pid = need(p, "id", int, where)
        if pid in ids:
            fail(f"{where}: duplicate id")
        ids.add(pid)
        if need(p, "type", str, where) not in PANEL_TYPES:
            fail(f"{where}: unknown type {p['type']}")
        need(p, "title", str, where)
        g = need(p, "gridPos", dict, where)
        for k in ("h", "w", "x", "y"):
            need(g, k, int, where + " gridPos")
        if g["w"] < 1 or g["x"] < 0 or g["x"] + g["w"] > 24 or g["h"] < 1:
            fail(f"{where}: gridPos outside the 24 columns")
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    fail(f"{where}: overlaps another panel at {x},{y}")
                cells.add((x, y))
        if p["type"] == "row":
            continue
        ds_ok(need(p, "datasource", dict, where), where, variables)
        targets = need(p, "targets", list, where)
        if not targets:
            fail(f"{where}: no targets")
        refs = set()
        for t in targets:
            tw = f"{where} target {t.get('refId')!r}"
            ref = need(t, "refId", str, tw)
            if ref in refs:
                fail(f"{tw}: duplicate refId")
            refs.add(ref)
            exprs.append(need(t, "expr", str, tw))
            ds_ok(need(t, "datasource", dict, tw), tw, variables)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, e in enumerate(exprs):
                e = e.replace("$__rate_interval", "1m")
                f.write(f"      - record: tcptw:dashboard_query:{i}\n")
                f.write(f"        expr: {json.dumps(e)}\n")
    print(f"{len(panels)} panels, {len(exprs)} queries")


main()
