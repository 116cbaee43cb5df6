#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Copyright (C) 2026 The tcptw authors.
"""bench_vm.py KO [--rounds N] [--json PATH] [--only W,...]

Runs in the guest (scripts/bench.sh boots it): six workloads, each in
three modes side by side in this one boot, alternating, ROUNDS times:

  off       nothing loaded
  tcptw     tcptw.ko (KO)
  bpftrace  scripts/tcptw.bt: the same decisions on the same functions

Workloads (each gives a rate; higher is better):

  timewait  short connections, server closes first (every one ends in
            TIME_WAIT), 4 clients at once: connections/s
  exhaust   4 clients connecting into a 50-port range with tcp_tw_reuse=0
            (most connect()s fail with EADDRNOTAVAIL): attempts/s
  synflood  raw SYNs at a listener with tcp_syncookies=2 (every SYN gets a
            cookie): SYN-ACKs sent/s (SyncookiesSent)
  rstflood  raw SYNs at a closed port: RSTs sent/s (OutRsts)
  natchurn  short connections through an nft masquerade (conntrack):
            connections/s
  wrk       wrk -c 50 against nginx with Connection: close: requests/s

Prints one table (median per mode, the spread of each as (max-min)/median,
and the ratios tcptw/off and bpftrace/off) and writes it as JSON. Rates
under TCG are small and mean nothing on their own; only the ratios within
one boot do. Gates nothing.
"""
import argparse
import json
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
WORKLOADS = ["timewait", "exhaust", "synflood", "rstflood", "natchurn", "wrk"]
MODES = ["off", "tcptw", "bpftrace"]


def sh(cmd, check=True, **kw):
    return subprocess.run(cmd, shell=True, check=check, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def nsx(ns, cmd, **kw):
    return sh(f"ip netns exec {ns} {cmd}", **kw)


def ns_down():
    for ns in (CLI, SRV, NAT):
        sh(f"ip netns del {ns}", check=False)


def ns_up(nat=False):
    """cli 198.18.9.1 -- srv 198.18.9.2, or cli -- nat -- srv"""
    ns_down()
    for ns in (CLI, SRV) + ((NAT,) if nat else ()):
        sh(f"ip netns add {ns}")
        sh(f"ip -n {ns} link set lo up")
    if not nat:
        sh(f"ip link add v0 netns {CLI} type veth peer name v1 netns {SRV}")
        sh(f"ip -n {CLI} addr add 198.18.9.1/24 dev v0")
        sh(f"ip -n {SRV} addr add 198.18.9.2/24 dev v1")
        sh(f"ip -n {CLI} link set v0 up")
        sh(f"ip -n {SRV} link set v1 up")
        return "198.18.9.2"
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


def clients(addr, n, procs, extra=""):
    """procs clients at once, n connections each: attempts per second"""
    t0 = time.monotonic()
    ps = [subprocess.Popen(
        f"ip netns exec {CLI} timeout 120 {TRAFFIC} client --connect "
        f"{addr}:80 --count {n} --timeout 100 --connect-timeout 2000 {extra}",
        shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True) for _ in range(procs)]
    attempts = 0
    for p in ps:
        out, _ = p.communicate()
        try:
            attempts += json.loads(out)["attempts"]
        except (ValueError, KeyError):
            pass
    return attempts / (time.monotonic() - t0)


def w_timewait():
    addr = ns_up()
    srv = server(addr)
    try:
        return clients(addr, 400, 4)
    finally:
        stop(srv)


def w_exhaust():
    addr = ns_up()
    nsx(CLI, "sysctl -qw net.ipv4.tcp_tw_reuse=0")
    nsx(CLI, "sysctl -qw net.ipv4.ip_local_port_range='20000 20049'")
    srv = server(addr)
    try:
        return clients(addr, 2500, 4)
    finally:
        stop(srv)


def flood(addr, port, counter, seconds=4):
    """raw SYNs from cli for `seconds`: srv's `counter` per second"""
    # cli's own stack would answer the SYN-ACKs and RSTs: drop them
    subprocess.run(["ip", "netns", "exec", CLI, "nft", "-f", "-"], text=True,
                   check=True, input="table inet f {\n chain in {\n type "
                   "filter hook input priority 0;\n tcp sport %d drop\n }\n}\n"
                   % port)
    before = nstat(SRV, [counter])[counter]
    t0 = time.monotonic()
    nsx(CLI, f"timeout 60 {FLOOD} --src 198.18.9.1 --dst {addr}:{port} "
        f"--seconds {seconds}")
    time.sleep(0.2)
    dt = time.monotonic() - t0
    return (nstat(SRV, [counter])[counter] - before) / dt


def w_synflood():
    addr = ns_up()
    nsx(SRV, "sysctl -qw net.ipv4.tcp_syncookies=2")
    srv = server(addr, "--no-accept")
    try:
        return flood(addr, 80, "TcpExtSyncookiesSent")
    finally:
        stop(srv)


def w_rstflood():
    addr = ns_up()
    return flood(addr, 81, "TcpOutRsts")


def w_natchurn():
    addr = ns_up(nat=True)
    srv = server(addr)
    try:
        return clients(addr, 400, 4)
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
        out = nsx(CLI, f"timeout 60 wrk -c 50 -t 2 -d 5s -H "
                  f"'Connection: close' http://{addr}/").stdout
        m = re.search(r"Requests/sec:\s*([\d.]+)", out)
        return float(m.group(1)) if m else 0.0
    finally:
        stop(ng)
        sh("pkill -f 'nginx -p /tmp/bench-nginx'", check=False)


def mode_on(mode, ko):
    if mode == "tcptw":
        sh(f"insmod {ko}")
        return None
    if mode == "bpftrace":
        log = open("/tmp/bench.bt.log", "w")
        p = subprocess.Popen(["bpftrace", BT], stdout=log,
                             stderr=subprocess.STDOUT, text=True)
        # under TCG bpftrace takes tens of seconds to compile and attach
        for _ in range(1200):
            if p.poll() is not None:
                raise SystemExit("bpftrace exited: " +
                                 open("/tmp/bench.bt.log").read()[-500:])
            if "Attaching" in open("/tmp/bench.bt.log").read():
                break
            time.sleep(0.1)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ko")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=os.path.join(
        REPO, ".cache", "bench-%s.json" % os.uname().release))
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--modes", default=",".join(MODES),
                    help="a subset of off,tcptw,bpftrace (a dry run: off)")
    a = ap.parse_args()
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
    res = {w: {m: [] for m in MODES} for w in only}
    started = time.time()
    for r in range(a.rounds):
        # rotate the order each round, so that drift favours no mode
        order = modes[r % len(modes):] + modes[:r % len(modes)]
        for mode in order:
            p = mode_on(mode, a.ko)
            try:
                for w in only:
                    res[w][mode].append(globals()["w_" + w]())
            finally:
                mode_off(mode, p)
            ns_down()
        print(f"# round {r + 1}/{a.rounds} done, {time.time() - started:.0f} s",
              flush=True)
    table = []
    print(f"tcptw bench on {os.uname().release}, {a.rounds} rounds, "
          "modes alternating; median rate (spread = (max-min)/median)")
    print(f"{'workload':<10}{'off':>16}{'tcptw':>16}{'bpftrace':>16}"
          f"{'tcptw/off':>11}{'bpf/off':>9}")
    for w in only:
        row = {"workload": w}
        cells = []
        for m in MODES:
            v = res[w][m] or [0.0]
            med = statistics.median(v)
            spread = (max(v) - min(v)) / med if med else 0
            row[m] = {"median": round(med, 1), "spread": round(spread, 3),
                      "runs": [round(x, 1) for x in v]}
            cells.append(f"{med:>9.0f} ±{spread * 100:>3.0f}%")
        off = row["off"]["median"] or 1
        row["tcptw_ratio"] = round(row["tcptw"]["median"] / off, 3)
        row["bpftrace_ratio"] = round(row["bpftrace"]["median"] / off, 3)
        table.append(row)
        print(f"{w:<10}{cells[0]:>16}{cells[1]:>16}{cells[2]:>16}"
              f"{row['tcptw_ratio']:>11.3f}{row['bpftrace_ratio']:>9.3f}")
    with open(a.json, "w") as f:
        json.dump({"kernel": os.uname().release, "rounds": a.rounds,
                   "date": time.strftime("%Y-%m-%d"), "results": table}, f,
                  indent=1)
    print(f"# JSON: {a.json}")


if __name__ == "__main__":
    sys.exit(main())
