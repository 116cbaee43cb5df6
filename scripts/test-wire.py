#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""test-wire.py: the wire oracle (selftests/tcptw_wire.py) on packet
traces made here, whose every packet is known: each scenario's counts are
worked out by hand from the TCP state machine, not from the oracle. TAP
on stdout; no root, no guest. Run by make check (scripts/check.sh)."""
import json
import os
import socket
import subprocess
import sys
import tempfile

import dpkt

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(REPO, "selftests", "tcptw_wire.py")
C = socket.inet_aton("198.18.5.1")
S = socket.inet_aton("198.18.5.2")
SYN, ACK, FIN, RST = (dpkt.tcp.TH_SYN, dpkt.tcp.TH_ACK, dpkt.tcp.TH_FIN,
                      dpkt.tcp.TH_RST)


class Trace:
    """packets between the client C and the server S:8300"""

    def __init__(self):
        self.pkts = []

    def c(self, sport, seq, ack, flags, data=b""):
        self.pkts.append((C, S, sport, 8300, seq, ack, flags, data))

    def s(self, sport, seq, ack, flags, data=b""):
        self.pkts.append((S, C, 8300, sport, seq, ack, flags, data))

    def handshake(self, p, isn=100, isn_s=500):
        self.c(p, isn, 0, SYN)
        self.s(p, isn_s, isn + 1, SYN | ACK)
        self.c(p, isn + 1, isn_s + 1, ACK)

    def write(self, path):
        w = dpkt.pcap.Writer(open(path, "wb"), linktype=dpkt.pcap.DLT_RAW)
        for i, (src, dst, sp, dp, seq, ack, flags, data) in \
                enumerate(self.pkts):
            tcp = dpkt.tcp.TCP(sport=sp, dport=dp, seq=seq, ack=ack,
                               flags=flags, data=data)
            tcp.off = 5
            ip = dpkt.ip.IP(src=src, dst=dst, p=6, data=tcp)
            ip.len = 20 + len(bytes(tcp))
            w.writepkt(bytes(ip), 1.0 + i / 1000)
        w.close()


def server_first(t, p, split):
    """a connection the server closes first; the client acks its FIN on
    its own first (split) or with its own FIN"""
    t.handshake(p)
    t.s(p, 501, 101, FIN | ACK)
    if split:
        t.c(p, 101, 502, ACK)
    t.c(p, 101, 502, FIN | ACK)
    t.s(p, 502, 102, ACK)


def client_first(t, p):
    t.handshake(p)
    t.c(p, 101, 501, FIN | ACK)
    t.s(p, 501, 102, FIN | ACK)
    t.c(p, 102, 502, ACK)


def sc_piggyback():
    t = Trace()
    server_first(t, 40000, False)
    return t, {"conns": 1, "fin_server_first": 1, "seg_tw_server": 0,
               "fw2_fin_ack_server": 0, "tw_ack_server": 0}


def sc_split():
    # the client's FIN after its own ACK reaches the server's FIN_WAIT2
    # orphan (a TIME_WAIT socket): one segment, the server's ACK of it
    t = Trace()
    server_first(t, 40000, True)
    server_first(t, 40001, False)
    server_first(t, 40002, True)
    return t, {"conns": 3, "fin_server_first": 3, "seg_tw_server": 2,
               "fw2_fin_ack_server": 2, "tw_ack_server": 0}


def sc_fin_retrans():
    # the client's FIN again after the server's last ACK: it reaches the
    # server's TIME_WAIT socket, which acks it again
    t = Trace()
    server_first(t, 40000, False)
    t.c(40000, 101, 502, FIN | ACK)
    t.s(40000, 502, 102, ACK)
    return t, {"seg_tw_server": 1, "tw_ack_server": 1, "seg_tw_client": 0}


def sc_client_tw():
    # client closes first; the server's FIN retransmitted reaches the
    # client's TIME_WAIT socket
    t = Trace()
    client_first(t, 40000)
    t.s(40000, 501, 102, FIN | ACK)
    t.c(40000, 102, 502, ACK)
    return t, {"fin_client_first": 1, "seg_tw_client": 1,
               "tw_ack_client": 1, "seg_tw_server": 0}


def sc_syn_paws():
    # a new SYN on the tuple of a server TIME_WAIT socket: refused with
    # its ACK, the client's RST ends the socket, the SYN again is answered
    t = Trace()
    server_first(t, 40000, False)
    t.c(40000, 9000, 0, SYN)
    t.s(40000, 502, 102, ACK)
    t.c(40000, 102, 0, RST)
    t.handshake(40000, 9000, 7000)
    return t, {"syn": 3, "syn_retrans": 1, "syn_tw": 1, "syn_tw_refused": 1,
               "syn_tw_acked": 1, "rst_client": 1, "rst_client_tw": 1,
               "syn_recycled": 0, "seg_tw_server": 0, "conns": 2}


def sc_recycled():
    # a new SYN the server's TIME_WAIT socket hands to the listener
    t = Trace()
    server_first(t, 40000, False)
    t.handshake(40000, 9000, 7000)
    return t, {"syn_tw": 1, "syn_recycled": 1, "syn_tw_refused": 0,
               "conns": 2}


def rst_then_connect(seq):
    """a connection the server closed first (its TIME_WAIT socket's
    rcv_nxt is 102), a client RST at SEQ, then a new connection"""
    t = Trace()
    server_first(t, 40000, False)
    t.c(40000, seq, 0, RST)
    t.handshake(40000, 9000, 7000)
    return t


def sc_stale_rst():
    # the server's FIN again reaches the client after its socket ended:
    # the client's RST answers it with that FIN's ACK as its sequence,
    # one below the server's TIME_WAIT socket's rcv_nxt, which ignores it
    # and then hands the next SYN to the listener
    return rst_then_connect(101), {
        "rst_client": 1, "seg_tw_server": 1, "rst_client_tw": 0,
        "syn_tw": 1, "syn_recycled": 1, "conns": 2}


def sc_rst_in_window():
    # a RST at the TIME_WAIT socket's rcv_nxt ends it: the next SYN finds
    # only the listener
    return rst_then_connect(102), {
        "rst_client": 1, "seg_tw_server": 1, "syn_tw": 0,
        "syn_recycled": 0, "conns": 2}


SCENARIOS = [sc_piggyback, sc_split, sc_fin_retrans, sc_client_tw,
             sc_syn_paws, sc_recycled, sc_stale_rst, sc_rst_in_window]


def main():
    print(f"1..{len(SCENARIOS)}")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, sc in enumerate(SCENARIOS, 1):
            t, want = sc()
            path = os.path.join(tmp, sc.__name__ + ".pcap")
            t.write(path)
            out = subprocess.run([sys.executable, ORACLE, path],
                                 capture_output=True, text=True)
            name = f"wire oracle: {sc.__name__[3:]}"
            if out.returncode:
                print(f"not ok {i} - {name}: exit {out.returncode}")
                print("# " + out.stderr.strip().replace("\n", "\n# "))
                failed += 1
                continue
            got = json.loads(out.stdout)["totals"]
            bad = {k: (got.get(k), v) for k, v in want.items()
                   if got.get(k) != v}
            if bad:
                failed += 1
                print(f"not ok {i} - {name}")
                for k, (g, w) in sorted(bad.items()):
                    print(f"#   {k}: got {g}, want {w}")
            else:
                print(f"ok {i} - {name} ({len(want)} counts)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
