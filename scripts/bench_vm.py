#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Copyright (C) 2026 The tcptw authors.
"""bench_vm.py KO [--rounds N] [--marks PATH] [--json PATH] [--only W,...]

Runs in the guest (scripts/bench.sh boots it under QEMU TCG with the
instruction counter scripts/insn-count.c): seven workloads, each in three
modes side by side in this one boot, alternating, ROUNDS times:

  off       nothing loaded
  tcptw     tcptw.ko (KO)
  bpftrace  scripts/tcptw.bt: the same decisions on the same functions

Each workload's own process executes the marker instruction right before
its measured loop and right after it (--mark); the plugin appends the
running instruction total of all vCPUs at each marker to PATH, which this
script reads through the 9p share. The figure is guest instructions per
unit of work:

  timewait  short connections, server closes first (each ends in
            TIME_WAIT on the server), full port range: per connection
  recycle   the same into a 50-port client range with tcp_tw_reuse=0: the
            client's ports come back at once and every SYN meets the
            server's TIME_WAIT socket of the same 4-tuple: per connection
  exhaust   client closes first in a 50-port range with tcp_tw_reuse=0:
            the range is filled with the client's TIME_WAIT sockets first,
            then every connect() walks them and fails with EADDRNOTAVAIL
            (asserted): per connect() attempt
  synflood  raw SYNs at a listener with tcp_syncookies=2: per SYN cookie
            sent (TcpExtSyncookiesSent)
  rstflood  raw SYNs at a closed port: per RST sent (TcpOutRsts)
  natchurn  short connections through an nft masquerade (conntrack): per
            connection
  ctchurn   short connections with conntrack in both namespaces (an nft
            `ct state new` rule on each side's input and output), no NAT:
            per connection
  timewait6 timewait over IPv6 (fd00::): per connection
  reuseport timewait at a 64-socket SO_REUSEPORT group (nginx reuseport
            with many workers, envoy): per connection
  wrk       wrk -c 50 -t 2 against nginx with Connection: close: per
            request; wrk is a stock binary, so this script marks around
            it and the count includes wrk's start-up and exit

The time-based rate of each run (units per second of the same loop) is
kept beside it, as a secondary figure: it moves with whatever else the
host runs, the instruction count does not. Gates nothing.
"""
import argparse
import ctypes
import json
import mmap
import os
import re
import signal
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAFFIC = os.path.join(REPO, "selftests", "tcptw_traffic")
FLOOD = os.path.join(REPO, "selftests", "tcptw_flood")
BT = os.path.join(REPO, "scripts", "tcptw.bt")
CLI, SRV, NAT = "bc", "bs", "bn"
WORKLOADS = ["timewait", "recycle", "exhaust", "synflood", "rstflood",
             "natchurn", "wrk", "ctchurn", "timewait6", "reuseport"]
UNITS = {"timewait": "connection", "recycle": "connection",
         "exhaust": "connect()", "synflood": "SYN cookie",
         "rstflood": "RST", "natchurn": "connection", "wrk": "request",
         "ctchurn": "connection", "timewait6": "connection",
         "reuseport": "connection"}
MODES = ["off", "tcptw", "bpftrace"]
# units per phase (wrk: seconds): under -icount a phase of 10^8
# instructions or more repeats within 0.5% (docs/bench.md)
SIZE = {"timewait": 600, "recycle": 600, "exhaust": 1200,
        "synflood": 12000, "rstflood": 12000, "natchurn": 400,
        "wrk": 2, "ctchurn": 400, "timewait6": 600, "reuseport": 600}
GROUP = 64
PORTS = "20000 20049"


class Fail(Exception):
    """a workload did not do what it measures"""


def sh(cmd, check=True, **kw):
    return subprocess.run(cmd, shell=True, check=check, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def nsx(ns, cmd, **kw):
    return sh(f"ip netns exec {ns} {cmd}", **kw)


class Marks:
    """the plugin's "mark N insns TOTAL" lines, read as they are appended"""

    def __init__(self, path):
        self.path = path
        self.pos = 0
        self.mark = None
        self.nums = []
        if path and os.path.exists(path):
            self.pos = os.path.getsize(path)
            # the marker for a stock binary, executed from here: a page
            # holding xchg %bx,%bx; ret
            self.page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ |
                                  mmap.PROT_WRITE | mmap.PROT_EXEC)
            self.page.write(b"\x66\x87\xdb\xc3")
            addr = ctypes.addressof(ctypes.c_char.from_buffer(self.page))
            self.mark = ctypes.CFUNCTYPE(None)(addr)

    def new(self):
        """totals marked since the last call"""
        if not self.path:
            return []
        with open(self.path) as f:
            f.seek(self.pos)
            data = f.read()
        # only whole lines; a partial one is read again next time
        end = data.rfind("\n") + 1
        self.pos += len(data[:end].encode())
        found = re.findall(r"^mark (\d+) insns (\d+)$", data[:end], re.M)
        # the marks' numbers, for a profile (BENCH_PROF, insn-prof.py)
        self.nums = [int(n) for n, _ in found]
        return [int(t) for _, t in found]


MARKS = Marks(None)


def ns_down():
    for ns in (CLI, SRV, NAT):
        sh(f"ip netns del {ns}", check=False)


def no_huge_pages():
    """no transparent huge pages, in every mode: under -icount a round
    repeats the same guest times, so khugepaged's periodic scan (its
    hpage_collapse_scan_pmd was in a tcptw synflood phase, with 2 million
    instructions of clear_page_erms) can land in the same mode's phase
    round after round"""
    for f in ("enabled", "defrag"):
        path = "/sys/kernel/mm/transparent_hugepage/" + f
        if os.path.exists(path):
            with open(path, "w") as fh:
                fh.write("never")


def busy_ticks():
    """the guest's non-idle CPU time so far, in USER_HZ ticks"""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7]


def quiesce():
    """let set-up's asynchronous work (udev events for the veths, the
    previous netns's cleanup: its TIME_WAIT purge and metrics flush walk
    whole hash tables, 2-3 million instructions that landed in the next
    phase's count) finish before a count starts: a second for it to
    start, then until three 0.3 s windows in a row are idle (at most one
    busy tick), 6 s at most"""
    sh("udevadm settle -t 10", check=False)
    time.sleep(1)
    deadline = time.time() + 6
    prev, quiet = busy_ticks(), 0
    while quiet < 3 and time.time() < deadline:
        time.sleep(0.3)
        cur = busy_ticks()
        quiet = quiet + 1 if cur - prev <= 1 else 0
        prev = cur


def ns_up(nat=False, v6=False):
    """cli 198.18.9.1 -- srv 198.18.9.2 (v6: fd00:9::1 -- fd00:9::2,
    returned as [fd00:9::2]), or cli -- nat -- srv"""
    ns_down()
    for ns in (CLI, SRV) + ((NAT,) if nat else ()):
        sh(f"ip netns add {ns}")
        sh(f"ip -n {ns} link set lo up")
    if not nat:
        sh(f"ip link add v0 netns {CLI} type veth peer name v1 netns {SRV}")
        sh(f"ip -n {CLI} addr add 198.18.9.1/24 dev v0")
        sh(f"ip -n {SRV} addr add 198.18.9.2/24 dev v1")
        if v6:
            sh(f"ip -n {CLI} addr add fd00:9::1/64 dev v0 nodad")
            sh(f"ip -n {SRV} addr add fd00:9::2/64 dev v1 nodad")
        sh(f"ip -n {CLI} link set v0 up")
        sh(f"ip -n {SRV} link set v1 up")
        return "[fd00:9::2]" if v6 else "198.18.9.2"
    sh(f"ip link add v0 netns {CLI} type veth peer name n0 netns {NAT}")
    sh(f"ip link add n1 netns {NAT} type veth peer name v1 netns {SRV}")
    sh(f"ip -n {CLI} addr add 198.18.9.1/24 dev v0")
    sh(f"ip -n {NAT} addr add 198.18.9.254/24 dev n0")
    sh(f"ip -n {NAT} addr add 198.18.10.254/24 dev n1")
    sh(f"ip -n {SRV} addr add 198.18.10.2/24 dev v1")
    for ns, dev in ((CLI, "v0"), (NAT, "n0"), (NAT, "n1"), (SRV, "v1")):
        sh(f"ip -n {ns} link set {dev} up")
    sh(f"ip -n {CLI} route add default via 198.18.9.254")
    sh(f"ip -n {SRV} route add default via 198.18.10.254")
    nsx(NAT, "sysctl -qw net.ipv4.ip_forward=1")
    nft = ("table ip bench {\n chain post {\n type nat hook postrouting "
           "priority 100;\n oifname \"n1\" masquerade\n }\n}\n")
    subprocess.run(["ip", "netns", "exec", NAT, "nft", "-f", "-"],
                   input=nft, text=True, check=True)
    return "198.18.10.2"


def nstat(ns, names):
    """absolute values of MIB counters in netns ns"""
    out = nsx(ns, "nstat -asz").stdout
    vals = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] in names:
            vals[f[0]] = int(f[1])
    return {n: vals.get(n, 0) for n in names}


def server(addr, extra=""):
    ready = "/tmp/bench.ready"
    if os.path.exists(ready):
        os.unlink(ready)
    p = subprocess.Popen(
        f"ip netns exec {SRV} timeout 120 {TRAFFIC} server --listen "
        f"{addr}:80 --count 0 --timeout 100 --ready-file {ready} {extra}",
        shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(ready):
            break
        time.sleep(0.1)
    return p


def stop(p):
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def measured(units, seconds, insns, note=""):
    return {"units": units, "seconds": seconds, "insns": insns,
            "note": note}


def count_marks(totals):
    """instructions between the phase's two marks, None without them"""
    if len(totals) != 2:
        if MARKS.path:
            print(f"# warning: {len(totals)} marks in a phase, not 2",
                  flush=True)
        return None
    return totals[1] - totals[0]


def client(addr, n, extra="", mark=True):
    """one client, n connections: its JSON summary"""
    out = nsx(CLI, f"timeout 120 {TRAFFIC} client --connect {addr}:80 "
              f"--count {n} --timeout 100 --connect-timeout 2000 "
              f"{'--mark ' if mark else ''}{extra}", check=False).stdout
    try:
        return json.loads(out)
    except ValueError as e:
        raise Fail(f"client printed no JSON: {out[-200:]!r}") from e


def connections(addr, n, extra=""):
    MARKS.new()
    r = client(addr, n, extra)
    insns = count_marks(MARKS.new())
    if r["ok"] < n * 0.99:
        raise Fail(f"{r['ok']} of {n} connections ok: {r['errors']}")
    return measured(r["ok"], r["elapsed_ms"] / 1e3, insns)


def served(addr, w):
    """workload w's connections to a server at addr (started, stopped)"""
    srv = server(addr)
    try:
        quiesce()
        return connections(addr, SIZE[w])
    finally:
        stop(srv)


def w_timewait():
    return served(ns_up(), "timewait")


def w_recycle():
    addr = ns_up()
    nsx(CLI, "sysctl -qw net.ipv4.tcp_tw_reuse=0")
    nsx(CLI, f"sysctl -qw net.ipv4.ip_local_port_range='{PORTS}'")
    return served(addr, "recycle")


def w_exhaust():
    addr = ns_up()
    nsx(CLI, "sysctl -qw net.ipv4.tcp_tw_reuse=0")
    nsx(CLI, f"sysctl -qw net.ipv4.ip_local_port_range='{PORTS}'")
    srv = server(addr, "--close-first client")
    try:
        # fill the range: 50 connections, each leaving the client's end
        # in TIME_WAIT for 60 s
        fill = client(addr, 50, "--close-first client", mark=False)
        if fill["ok"] != 50:
            raise Fail(f"filling the range: {fill['ok']} of 50 ok")
        quiesce()
        MARKS.new()
        n = SIZE["exhaust"]
        r = client(addr, n, "--close-first client")
        insns = count_marks(MARKS.new())
        # every attempt must have failed in connect() for want of a port
        if r["attempts"] != n or r["errors"].get("EADDRNOTAVAIL") != n:
            raise Fail(f"exhaust: {r['attempts']} attempts, {r['ok']} ok, "
                       f"errors {r['errors']}: not all EADDRNOTAVAIL")
        return measured(n, r["elapsed_ms"] / 1e3, insns)
    finally:
        stop(srv)


def flood(addr, port, counter, n):
    """n raw SYNs from cli: srv's `counter` delta is the unit"""
    # cli's own stack would answer the SYN-ACKs and RSTs: drop them
    subprocess.run(["ip", "netns", "exec", CLI, "nft", "-f", "-"], text=True,
                   check=True, input="table inet f {\n chain in {\n type "
                   "filter hook input priority 0;\n tcp sport %d drop\n }\n}\n"
                   % port)
    quiesce()
    before = nstat(SRV, [counter])[counter]
    MARKS.new()
    out = nsx(CLI, f"timeout 120 {FLOOD} --src 198.18.9.1 --dst "
              f"{addr}:{port} --count {n} --seconds 100 --mark").stdout
    insns = count_marks(MARKS.new())
    r = json.loads(out)
    time.sleep(0.2)
    units = nstat(SRV, [counter])[counter] - before
    if units < r["sent"] * 0.9:
        raise Fail(f"{counter} moved by {units} for {r['sent']} SYNs")
    return measured(units, r["seconds"], insns)


def w_synflood():
    addr = ns_up()
    nsx(SRV, "sysctl -qw net.ipv4.tcp_syncookies=2")
    srv = server(addr, "--no-accept")
    try:
        return flood(addr, 80, "TcpExtSyncookiesSent", SIZE["synflood"])
    finally:
        stop(srv)


def w_rstflood():
    addr = ns_up()
    return flood(addr, 81, "TcpOutRsts", SIZE["rstflood"])


def w_natchurn():
    return served(ns_up(nat=True), "natchurn")


def w_ctchurn():
    addr = ns_up()
    rules = ("table ip bench {\n chain in { type filter hook input "
             "priority 0; ct state new counter; }\n chain out { type filter "
             "hook output priority 0; ct state new counter; }\n}\n")
    for ns in (CLI, SRV):
        subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"],
                       input=rules, text=True, check=True)
    srv = server(addr)
    try:
        quiesce()
        before = int(nsx(SRV, "cat /proc/sys/net/netfilter/"
                          "nf_conntrack_count").stdout)
        r = connections(addr, SIZE["ctchurn"])
        after = int(nsx(SRV, "cat /proc/sys/net/netfilter/"
                         "nf_conntrack_count").stdout)
        # conntrack tracked every flow (each entry stays in TIME_WAIT)
        if after - before < r["units"]:
            raise Fail(f"ctchurn: {after - before} conntrack entries for "
                       f"{r['units']} connections")
        return r
    finally:
        stop(srv)


def w_timewait6():
    return served(ns_up(v6=True), "timewait6")


def w_reuseport():
    addr = ns_up()
    srv = server(addr, f"--reuseport {GROUP}")
    try:
        n = len(nsx(SRV, "ss -Hltn 'sport = :80'").stdout.splitlines())
        if n != GROUP:
            raise Fail(f"reuseport: {n} listening sockets, not {GROUP}")
        quiesce()
        return connections(addr, SIZE["reuseport"])
    finally:
        stop(srv)


NGINX_CONF = """user root; daemon off; worker_processes 1;
pid {d}/nginx.pid; error_log {d}/error.log error;
events {{ worker_connections 1024; }}
http {{ access_log off; keepalive_timeout 0;
  client_body_temp_path {d}/cb; proxy_temp_path {d}/px;
  fastcgi_temp_path {d}/fc; uwsgi_temp_path {d}/uw; scgi_temp_path {d}/sc;
  server {{ listen {a}:80; root {d}/www; }} }}
"""


def w_wrk():
    addr = ns_up()
    d = "/tmp/bench-nginx"
    os.makedirs(d + "/www", exist_ok=True)
    with open(d + "/www/index.html", "w") as f:
        f.write("ok\n")
    with open(d + "/nginx.conf", "w") as f:
        f.write(NGINX_CONF.format(d=d, a=addr))
    ng = subprocess.Popen(
        f"ip netns exec {SRV} timeout 120 nginx -p {d} -e {d}/error.log "
        f"-c {d}/nginx.conf", shell=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if nsx(SRV, "ss -Hltn 'sport = :80'").stdout.strip():
            break
        time.sleep(0.1)
    try:
        quiesce()
        MARKS.new()
        if MARKS.mark:
            MARKS.mark()
        out = nsx(CLI, f"timeout 60 wrk -c 50 -t 2 -d {SIZE['wrk']}s -H "
                  f"'Connection: close' http://{addr}/").stdout
        if MARKS.mark:
            MARKS.mark()
        insns = count_marks(MARKS.new())
        m = re.search(r"(\d+) requests in ([\d.]+)(m?s)", out)
        if not m or not int(m.group(1)):
            raise Fail(f"wrk: no requests: {out[-300:]!r}")
        secs = float(m.group(2)) / (1e3 if m.group(3) == "ms" else 1)
        return measured(int(m.group(1)), secs, insns)
    finally:
        stop(ng)
        sh("pkill -f 'nginx -p /tmp/bench-nginx'", check=False)


def bt_program():
    """scripts/tcptw.bt, on 6.10+ with the tcp_send_reset tracepoint that
    tcptw takes there instead of tcp_v{4,6}_send_reset (see the .bt)"""
    text = open(BT).read()
    # the tracepoint is older (4.15), but only 6.10 made it fire for every
    # RST and gave it the reason field
    tp = sh("bpftrace -lv 'tracepoint:tcp:tcp_send_reset'", check=False)
    if re.search(r"\breason;", tp.stdout):
        text = re.sub(r"kfunc:tcp_v4_send_reset.*?/\* end of send_reset \*/",
                      "tracepoint:tcp:tcp_send_reset { @rst[\"sent\"] = "
                      "count(); @rst_reason[args->reason] = count(); }",
                      text, flags=re.S)
    # the TIME_WAIT birth, for ages, as tcptw takes it:
    # inet_twsk_hashdance up to 6.11, inet_twsk_hashdance_schedule from
    # 6.12, none where the socket carries its own entry stamp (6.14-ish)
    rel = tuple(int(x) for x in os.uname().release.split(".")[:2])
    # a failed connect(): 5.10's failure path calls no function of its
    # own, tcptw reads it from the state-change tracepoint there
    if rel < (6, 1):
        text = re.sub(r"kfunc:inet_bhash2_reset_saddr /\* connect failed.*?/\* end of connect failed \*/",
                      "tracepoint:sock:inet_sock_set_state\n"
                      "/args->oldstate == 2 && args->newstate == 7 && args->protocol == 6/\n"
                      "{\n"
                      "\t$sk = (struct sock *)args->skaddr;\n"
                      "\tif ($sk->sk_err == 0 && ((struct tcp_sock *)$sk)->segs_out == 0) {\n"
                      "\t\t$reuse = $sk->__sk_common.skc_net.net->ipv4.sysctl_tcp_tw_reuse;\n"
                      "\t\t$why = \"tw_socket\";\n"
                      "\t\tif ($reuse == 0) { $why = \"disabled\"; }\n"
                      "\t\tif ($reuse == 2) { $why = \"loopback_only_or_tw_socket\"; }\n"
                      "\t\t@connect_failed[ntop(args->daddr), args->dport, $why] = count();\n"
                      "\t}\n"
                      "}", text, flags=re.S)
    if rel >= (6, 14):
        text = re.sub(r"kfunc:inet_twsk_hashdance /\* birth.*?/\* end of birth \*/",
                      "", text, flags=re.S)
        text = re.sub(r"/\* age \*/.*?/\* end of age \*/",
                      "@reuse_age_ms = hist((uint32)(nsecs / 1000000) - "
                      "$tw->tw_entry_stamp); }", text, flags=re.S)
    elif rel >= (6, 12):
        text = text.replace("kfunc:inet_twsk_hashdance /* birth */",
                            "kfunc:inet_twsk_hashdance_schedule /* birth */")
    with open("/tmp/bench.bt", "w") as f:
        f.write(text)
    return "/tmp/bench.bt"


def mode_on(mode, ko):
    if mode == "tcptw":
        sh(f"insmod {ko}")
        # the module's uevent: udev's worker for it exits idle seconds
        # later, which counted up to 3 million instructions (user space,
        # unmap_page_range) in the phase that followed, tcptw's alone
        sh("udevadm settle -t 10", check=False)
        time.sleep(4)
        return None
    if mode == "bpftrace":
        log = open("/tmp/bench.bt.log", "w")
        p = subprocess.Popen(["bpftrace", bt_program()], stdout=log,
                             stderr=subprocess.STDOUT, text=True)
        # under TCG bpftrace takes tens of seconds to compile and attach;
        # "Attaching" comes before the attaching, which once went on into
        # the next count (+45%): tcptw.bt's BEGIN says when it is done
        for _ in range(1800):
            if p.poll() is not None:
                raise Fail("bpftrace exited: " +
                           open("/tmp/bench.bt.log").read()[-500:])
            if "tcptw.bt: attached" in open("/tmp/bench.bt.log").read():
                break
            time.sleep(0.1)
        else:
            mode_off(mode, p)
            raise Fail("bpftrace did not attach in 180 s")
        time.sleep(2)
        return p
    return None


def mode_off(mode, p):
    if mode == "tcptw":
        sh("rmmod tcptw")
    elif p is not None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def spread(v):
    med = statistics.median(v)
    return (max(v) - min(v)) / med if med else 0.0


def summarize(w, runs, rounds):
    """one row: per mode the median per unit and its spread, per round the
    paired ratios to off"""
    row = {"workload": w, "unit": UNITS[w], "size": SIZE[w]}
    for m in MODES:
        rs = runs[m]
        per = [r["insns"] / r["units"] for r in rs
               if r and r["insns"] is not None and r["units"]]
        rate = [r["units"] / r["seconds"] for r in rs
                if r and r["seconds"] > 0]
        row[m] = {
            "insns_per_unit": round(statistics.median(per)) if per else None,
            "spread": round(spread(per), 4) if per else None,
            "runs": [round(x) for x in per],
            "rate": round(statistics.median(rate), 1) if rate else None,
            "rate_spread": round(spread(rate), 3) if rate else None,
            "units": [r["units"] for r in rs if r],
        }
    for m in MODES[1:]:
        ratios, tratios = [], []
        for i in range(rounds):
            a, b = runs["off"][i], runs[m][i]
            if not a or not b:
                continue
            if a["insns"] and b["insns"]:
                ratios.append((b["insns"] / b["units"]) /
                              (a["insns"] / a["units"]))
            if a["seconds"] > 0 and b["seconds"] > 0:
                tratios.append((b["units"] / b["seconds"]) /
                               (a["units"] / a["seconds"]))
        row[m + "_ratio"] = (round(statistics.median(ratios), 4)
                             if ratios else None)
        row[m + "_ratio_spread"] = round(spread(ratios), 4) if ratios else None
        row[m + "_ratios"] = [round(x, 4) for x in ratios]
        row[m + "_time_ratio"] = (round(statistics.median(tratios), 3)
                                  if tratios else None)
        row[m + "_time_ratio_spread"] = (round(spread(tratios), 3)
                                         if tratios else None)
    off, tw, bt = (row[m]["insns_per_unit"] for m in MODES)
    row["added_tcptw_over_bpftrace"] = (round((tw - off) / (bt - off), 3)
                                        if None not in (off, tw, bt) and
                                        bt != off else None)
    return row


def fmt(x, f):
    return "-" if x is None else format(x, f)


def print_table(table, rounds):
    print(f"tcptw bench on {os.uname().release}, {rounds} rounds, modes "
          "alternating: guest instructions per unit (median over rounds);\n"
          "ratios are the median of each round's paired ratio, ± its spread "
          "(max-min)/median; added = (tcptw-off)/(bpftrace-off);\n"
          "time = the same ratio of units/s (host-load dependent, secondary)")
    print(f"{'workload':<10}{'unit':<12}{'off':>10}{'tcptw':>10}"
          f"{'bpftrace':>10}{'tcptw/off':>17}{'bpftrace/off':>17}"
          f"{'added':>7}{'time tw':>9}{'time bt':>9}")
    for row in table:
        cells = [fmt(row[m]["insns_per_unit"], ".0f") for m in MODES]
        rat = [f"{fmt(row[m + '_ratio'], '.4f')} ±"
               f"{fmt(row[m + '_ratio_spread'] and row[m + '_ratio_spread'] * 100, '.2f')}%"
               for m in MODES[1:]]
        print(f"{row['workload']:<10}{row['unit']:<12}{cells[0]:>10}"
              f"{cells[1]:>10}{cells[2]:>10}{rat[0]:>17}{rat[1]:>17}"
              f"{fmt(row['added_tcptw_over_bpftrace'], '.2f'):>7}"
              f"{fmt(row['tcptw_time_ratio'], '.3f'):>9}"
              f"{fmt(row['bpftrace_time_ratio'], '.3f'):>9}")
    print("per-mode spread of insns/unit across rounds (max-min)/median:")
    for row in table:
        print(f"  {row['workload']:<10}" + "  ".join(
            f"{m} {fmt(row[m]['spread'] and row[m]['spread'] * 100, '.2f')}%"
            for m in MODES))


def main():
    global MARKS
    ap = argparse.ArgumentParser()
    ap.add_argument("ko")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--marks", default="",
                    help="the plugin's out= file (no counts without it)")
    ap.add_argument("--json", default=os.path.join(
        REPO, ".cache", "bench-%s.json" % os.uname().release))
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--modes", default=",".join(MODES),
                    help="a subset of off,tcptw,bpftrace (a dry run: off)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply every phase's size (a dry run: 0.1)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="passes over the workloads, mode off, not counted")
    ap.add_argument("--kallsyms", default="",
                    help="copy /proc/kallsyms here once tcptw is loaded "
                    "(a profile's symbols, BENCH_PROF)")
    ap.add_argument("--meta", default="{}", help="JSON merged into the "
                    "output (bench.sh: commit, QEMU version)")
    a = ap.parse_args()
    MARKS = Marks(a.marks)
    if a.marks and not MARKS.mark:
        raise SystemExit(f"no marks file {a.marks}: is the plugin loaded?")
    for w in SIZE:
        SIZE[w] = max(1, round(SIZE[w] * a.scale))
    modes = [m for m in a.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            raise SystemExit(f"unknown mode {m}: {', '.join(MODES)}")
    only = [w for w in a.only.split(",") if w]
    for w in only:
        if w not in WORKLOADS:
            raise SystemExit(f"unknown workload {w}: {', '.join(WORKLOADS)}")
    sh("rmmod tcptw", check=False)
    sh("modprobe nf_conntrack", check=False)
    no_huge_pages()
    runs = {w: {m: [None] * a.rounds for m in MODES} for w in only}
    failed = []
    started = time.time()
    # the first pass after boot grows slab caches and faults in code and
    # data the later ones find ready: 3% more instructions per connection
    # seen in round 1's first mode, so a pass that is not counted
    for _ in range(a.warmup):
        for w in only:
            try:
                globals()["w_" + w]()
            except (Fail, subprocess.CalledProcessError) as e:
                print(f"# warm-up {w}: {e}", flush=True)
            ns_down()
            quiesce()
    print(f"# warm-up done, {time.time() - started:.0f} s", flush=True)
    for r in range(a.rounds):
        # rotate the order each round, so that drift favours no mode
        order = modes[r % len(modes):] + modes[:r % len(modes)]
        for mode in order:
            try:
                p = mode_on(mode, a.ko)
            except (Fail, subprocess.CalledProcessError) as e:
                failed.append(f"{mode} round {r + 1}: {e}")
                print(f"# FAIL {failed[-1]}", flush=True)
                continue
            if mode == "tcptw" and r == 0:
                print("# /proc/net/tcptw/probes:\n" + sh(
                    "cat /proc/net/tcptw/probes", check=False).stdout,
                    flush=True)
                if a.kallsyms:
                    with open("/proc/kallsyms") as f, \
                            open(a.kallsyms, "w") as o:
                        o.write(f.read())
            if mode == "tcptw" and a.kallsyms:
                # each load may put the module elsewhere (7.2 does)
                with open("/proc/kallsyms") as f, \
                        open(f"{a.kallsyms}.r{r + 1}", "w") as o:
                    o.write(f.read())
            try:
                for w in only:
                    try:
                        runs[w][mode][r] = globals()["w_" + w]()
                        if a.kallsyms and runs[w][mode][r]:
                            # the phase's marks, beside the symbols
                            with open(os.path.join(os.path.dirname(
                                    a.kallsyms), "phases"), "a") as o:
                                print(w, mode, r + 1,
                                      *(MARKS.nums + [0, 0])[:2],
                                      runs[w][mode][r]["units"], file=o)
                    except (Fail, subprocess.CalledProcessError) as e:
                        failed.append(f"{w} {mode} round {r + 1}: {e}")
                        print(f"# FAIL {failed[-1]}", flush=True)
                    ns_down()
                    quiesce()
            finally:
                mode_off(mode, p)
        print(f"# round {r + 1}/{a.rounds} done, "
              f"{time.time() - started:.0f} s", flush=True)
    table = [summarize(w, runs[w], a.rounds) for w in only]
    print_table(table, a.rounds)
    doc = {"kernel": os.uname().release, "rounds": a.rounds,
           "date": time.strftime("%Y-%m-%d"), "scale": a.scale,
           "failed": failed, "results": table,
           "raw": {w: runs[w] for w in only}}
    doc.update(json.loads(a.meta))
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"# JSON: {a.json}")
    for f in failed:
        print(f"FAIL: {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
