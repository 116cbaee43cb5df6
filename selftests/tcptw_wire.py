#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# The wire oracle: what a packet trace says each TCP decision was, worked
# out from the packets alone (no tcptw, no MIB), for the selftests to
# compare tcptw's counters with.
#
#   tcptw_wire.py PCAP [--server ADDR:PORT]... [--rfc1337]
#
# PCAP is a tcpdump -w trace taken at one interface (Ethernet, loopback or
# Linux cooked). --server names the listening side (repeatable); without
# it the side a connection's first SYN goes to is taken. A client's RST to
# a server TIME_WAIT socket's ACK ends that socket (its next SYN meets the
# listener) unless --rfc1337 says the server has tcp_rfc1337=1. Prints one JSON
# object:
#
#   packets     TCP segments read
#   flows       one per 4-tuple (client = the side that sends the SYNs),
#               with the counts below
#   totals      each count summed over the flows
#   peers       each count summed per client address ("ADDR" as the server
#               sees it, the key of tcptw's peers rows)
#   listeners   each count summed per server "ADDR PORT"
#   explain     per count, the trace's packet numbers (1-based, as
#               tcpdump -r prints them) each increment was made at
#
# The counts, per 4-tuple:
#
#   syn             SYNs from the client (retransmissions included)
#   syn_retrans     ...of which retransmissions (the same ISN again)
#   synack          SYN-ACKs from the server (retransmissions included)
#   synack_retrans  ...of which retransmissions (the same ISN again)
#   conns           handshakes completed (the client's ACK of a SYN-ACK
#                   and a server segment other than a SYN-ACK after it)
#   syn_tw          SYNs that reached the server while its last connection
#                   on the tuple was in TIME_WAIT there (the server's FIN
#                   went first and both FINs were acknowledged)
#   syn_tw_refused  ...not answered by a SYN-ACK: the TIME_WAIT socket
#                   refused them (PAWS or sequence); each one counts
#                   (syn_tw less one per syn_recycled)
#   syn_tw_acked    ...of which answered with a bare ACK (the refusal's
#                   ACK: the kernel rate-limits it, so <= syn_tw_refused)
#   syn_tw_rst      ...of which answered with a RST
#   syn_recycled    connection attempts that found the server's TIME_WAIT
#                   socket and got a SYN-ACK: it handed them to the listener
#   syn_fw2         SYNs that reached the server while its last connection
#                   on the tuple waited in FIN_WAIT2 there (its FIN acked,
#                   the client's FIN not seen) and got no SYN-ACK
#   syn_fw2_acked   ...of which answered with a bare ACK
#   syn_client_tw   connection attempts on a tuple whose last connection
#                   the client closed first: its TIME_WAIT socket was
#                   taken over (tcp_tw_reuse) if it was still there
#   syn_unanswered  SYNs the server sent nothing back to before the
#                   client's next SYN or the end of the trace
#   ack_ignored     handshake-completing ACKs the server ignored: it
#                   retransmitted its SYN-ACK after them (a full accept
#                   queue)
#   rst_client, rst_server        RSTs each side sent
#   rst_client_tw   ...of the client's, those answering a server TIME_WAIT
#                   socket's ACK to a SYN (they end it: tcp_rfc1337=0)
#   rst_server_syn                ...of the server's, those answering a SYN
#   tw_ack_server, tw_ack_client  bare ACKs a side sent while its
#                   connection on the tuple was in TIME_WAIT (it closed
#                   first and both FINs were acknowledged)
#   fw2_fin_ack_server  the server's ACK of the client's FIN when its own
#                   FIN had been acked apart: sent by a TIME_WAIT socket
#                   in the FIN_WAIT2 substate (an orphan's usual end) or,
#                   when that ACK reached the socket while close() still
#                   held it (tcp_rcv_state_process()'s "bad case": a
#                   keepalive timer instead), by the full socket. The
#                   packets are the same: an upper bound for the first
#   fw2_ack_server  the server's bare ACKs answering SYNs in FIN_WAIT2
#   fin_server_first, fin_client_first  connections each side closed first
#   seg_tw_server, seg_tw_client  segments of a connection that reached
#                   a side after it closed first and its FIN was acked:
#                   its TIME_WAIT socket (the FIN_WAIT2 substate included)
#                   where it was an orphan, which each of them enters
#                   tcp_timewait_state_process() through (an upper bound:
#                   see fw2_fin_ack_server's "bad case"). A new attempt's
#                   SYNs and the RSTs answering them are syn_tw and
#                   rst_client_tw
import json
import socket
import sys

import dpkt

RFC1337 = False     # --rfc1337: the server keeps TIME_WAIT on a RST

COUNTS = ("syn", "syn_retrans", "synack", "synack_retrans", "conns",
          "syn_tw", "syn_tw_refused", "syn_tw_acked", "syn_tw_rst",
          "syn_recycled", "syn_fw2", "syn_fw2_acked", "syn_client_tw",
          "syn_unanswered", "ack_ignored", "rst_client", "rst_client_tw",
          "rst_server", "rst_server_syn", "tw_ack_server", "tw_ack_client",
          "fw2_fin_ack_server", "fw2_ack_server", "fin_server_first", "fin_client_first",
          "seg_tw_server", "seg_tw_client")


PACKET = 0          # the trace record being read (1-based)


class Counts(dict):
    """A flow's counts that remember the packet of each increment."""

    def __init__(self, explain):
        super().__init__(dict.fromkeys(COUNTS, 0))
        self.explain = explain

    def __setitem__(self, key, value):
        for _ in range(value - self.get(key, 0)):
            self.explain.setdefault(key, []).append(PACKET)
        super().__setitem__(key, value)


EXPLAIN = {}


def addr_str(raw):
    fam = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(fam, raw)


def l3_of(linktype, buf):
    """The IP packet in a captured frame, or None."""
    if linktype == dpkt.pcap.DLT_EN10MB:
        frame = dpkt.ethernet.Ethernet(buf)
    elif linktype == dpkt.pcap.DLT_LINUX_SLL:
        frame = dpkt.sll.SLL(buf)
    elif linktype == 276:       # DLT_LINUX_SLL2
        frame = dpkt.sll2.SLL2(buf)
    elif linktype in (dpkt.pcap.DLT_RAW, 101):
        return dpkt.ip.IP(buf) if buf[0] >> 4 == 4 else dpkt.ip6.IP6(buf)
    else:
        raise SystemExit(f"tcptw_wire: link type {linktype} not handled")
    data = frame.data
    return data if isinstance(data, (dpkt.ip.IP, dpkt.ip6.IP6)) else None


class Conn:
    """One connection (one client ISN) on a 4-tuple."""

    def __init__(self, isn):
        self.isn = isn
        self.isn_s = None
        self.fin = {}           # side -> the FIN's sequence number
        self.first_fin = None
        self.fin_acked = set()  # sides whose FIN the other side acked
        self.rst = False
        self.established = False
        self.ack_pending = False  # a handshake ACK not yet known taken
        self.fw2_fin = False    # the client's FIN reached a FIN_WAIT2 orphan

    def closed(self):
        return len(self.fin_acked) == 2

    def time_wait(self):
        """The side holding a TIME_WAIT socket after this connection."""
        if self.rst or not self.closed():
            return None
        return self.first_fin

    def fin_wait2(self):
        return (not self.rst and self.first_fin == "server" and
                "server" in self.fin_acked and "client" not in self.fin)


class Flow:
    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.c = Counts(EXPLAIN)
        self.conns = []
        self.prev = None        # the connection before the current attempt
        self.attempt = None     # the current attempt (client's ISN)
        self.kind = None        # what the attempt's SYNs met on the server
        self.syn_open = False   # the client's last SYN not yet answered
        self.answered = False   # the current attempt got a SYN-ACK
        self.synack_isn = set()

    def cur(self):
        return self.conns[-1] if self.conns else None

    def syn(self, seq):
        c = self.c
        c["syn"] += 1
        if self.syn_open:
            c["syn_unanswered"] += 1
        self.syn_open = True
        if self.attempt is not None and seq == self.attempt.isn:
            c["syn_retrans"] += 1
        else:
            self.prev = self.cur()
            self.attempt = Conn(seq)
            self.conns.append(self.attempt)
            self.answered = False
            tw = self.prev.time_wait() if self.prev else None
            if tw == "server":
                self.kind = "tw"
            elif self.prev is not None and self.prev.fin_wait2():
                self.kind = "fw2"
            elif tw == "client":
                self.kind = "client_tw"
                c["syn_client_tw"] += 1
            else:
                self.kind = None
        if self.kind == "tw" and not self.answered:
            c["syn_tw"] += 1
        elif self.kind == "fw2" and not self.answered:
            c["syn_fw2"] += 1

    def from_server(self, tcp, flags, plen):
        c = self.c
        syn_open, self.syn_open = self.syn_open, False
        if flags & dpkt.tcp.TH_SYN:
            if not flags & dpkt.tcp.TH_ACK:
                return
            c["synack"] += 1
            if tcp.seq in self.synack_isn:
                c["synack_retrans"] += 1
                if self.attempt is not None and self.attempt.ack_pending:
                    c["ack_ignored"] += 1
                    self.attempt.ack_pending = False
            self.synack_isn.add(tcp.seq)
            if self.attempt is not None and not self.answered:
                self.answered = True
                self.attempt.isn_s = tcp.seq
                if self.kind == "tw":
                    c["syn_recycled"] += 1
            return
        if flags & dpkt.tcp.TH_RST:
            self.to_tw("server")
            c["rst_server"] += 1
            if syn_open and not self.answered:
                c["rst_server_syn"] += 1
                if self.kind == "tw":
                    c["syn_tw_rst"] += 1
            self.reset("server", tcp.seq)
            return
        if syn_open and not self.answered and plen == 0 and \
                not flags & dpkt.tcp.TH_FIN:
            # a bare ACK answering the SYN: the old connection's state
            if self.kind == "tw":
                c["syn_tw_acked"] += 1
            elif self.kind == "fw2":
                c["syn_fw2_acked"] += 1
                c["fw2_ack_server"] += 1
        self.segment("server", tcp, flags, plen)

    def to_tw(self, side):
        """count a segment from SIDE that reaches the other side's
        TIME_WAIT socket (before it changes anything)"""
        cur = self.cur()
        other = "client" if side == "server" else "server"
        if cur is not None and not cur.rst and cur.first_fin == other and \
                other in cur.fin_acked:
            self.c["seg_tw_" + other] += 1

    def from_client(self, tcp, flags, plen):
        if flags & dpkt.tcp.TH_RST:
            self.to_tw("client")
            self.c["rst_client"] += 1
            if self.attempt is not None and not self.answered and \
                    self.prev is not None:
                # the answer to the old connection's ACK: it ends that
                # one's TIME_WAIT socket (tcp_rfc1337=0, Linux's default)
                if self.prev.time_wait() == "server":
                    self.c["rst_client_tw"] += 1
                if self.rst_ends(self.prev, "client", tcp.seq):
                    self.prev.rst = True
                    if self.kind == "tw":
                        self.kind = None
                return
            self.reset("client", tcp.seq)
            return
        self.segment("client", tcp, flags, plen)

    @staticmethod
    def rst_ends(conn, side, seq):
        """whether a RST from SIDE ends CONN. A TIME_WAIT socket on the
        other side takes only a RST at its rcv_nxt, and only with
        tcp_rfc1337=0 (tcp_timewait_state_process()): any other, such as
        the answer to a stale segment that reached a closed socket (its
        sequence number is that segment's ACK), it ignores"""
        tw = conn.time_wait()
        if tw is None or tw == side:
            return True
        return not RFC1337 and \
            seq == (conn.fin[side] + 1) & 0xffffffff

    def reset(self, side, seq):
        cur = self.cur()
        if cur is not None and self.rst_ends(cur, side, seq):
            cur.rst = True

    def segment(self, side, tcp, flags, plen):
        c = self.c
        # the connection the segment belongs to: the last one, or, for a
        # bare ACK from a TIME_WAIT socket, the previous one
        cur = self.cur()
        if cur is None:
            return
        other = "client" if side == "server" else "server"
        self.to_tw(side)
        if cur.isn_s is None and self.prev is not None and \
                self.prev.time_wait() == side:
            if flags & dpkt.tcp.TH_ACK and plen == 0 and \
                    not flags & dpkt.tcp.TH_FIN:
                c["tw_ack_" + side] += 1
            return
        tw = cur.time_wait()
        if tw == side and plen == 0 and not flags & dpkt.tcp.TH_FIN:
            c["tw_ack_" + side] += 1
            return
        # the server closed first and its FIN was acked on its own: the
        # socket, an orphan, is then most often a TIME_WAIT socket in the
        # FIN_WAIT2 substate, which ACKs the client's FIN (or still the
        # full socket, if close() held it when the ACK came: see above)
        if side == "client" and flags & dpkt.tcp.TH_FIN and cur.fin_wait2():
            cur.fw2_fin = True
        elif side == "server" and cur.fw2_fin and plen == 0 and \
                "client" in cur.fin and \
                tcp.ack == (cur.fin["client"] + 1) & 0xffffffff:
            cur.fw2_fin = False
            c["fw2_fin_ack_server"] += 1
        if side == "client" and cur.isn_s is not None and \
                not cur.established and flags & dpkt.tcp.TH_ACK and \
                tcp.ack == (cur.isn_s + 1) & 0xffffffff:
            cur.ack_pending = True
        if side == "server" and cur.ack_pending and not cur.established:
            cur.established = True
            cur.ack_pending = False
            c["conns"] += 1
        if flags & dpkt.tcp.TH_FIN and side not in cur.fin:
            cur.fin[side] = (tcp.seq + plen) & 0xffffffff
            if cur.first_fin is None:
                cur.first_fin = side
                c["fin_%s_first" % side] += 1
        if flags & dpkt.tcp.TH_ACK and other in cur.fin and \
                tcp.ack == (cur.fin[other] + 1) & 0xffffffff:
            cur.fin_acked.add(other)

    def finish(self):
        # a difference, not an event: no packet of its own
        dict.__setitem__(self.c, "syn_tw_refused",
                         self.c["syn_tw"] - self.c["syn_recycled"])
        if self.syn_open:
            self.c["syn_unanswered"] += 1
        # a handshake ACK the trace ends after: taken if the server sent
        # nothing after it (a full queue retransmits its SYN-ACK)
        for conn in self.conns:
            if conn.ack_pending and not conn.established:
                self.c["conns"] += 1


def main(argv):
    if len(argv) < 1 or argv[0] in ("-h", "--help"):
        print(__doc__ or "usage: tcptw_wire.py PCAP [--server ADDR:PORT]...")
        return 2
    path = argv[0]
    servers = set()
    rest = argv[1:]
    global RFC1337
    while rest:
        if rest[0] == "--rfc1337":
            RFC1337 = True
            rest = rest[1:]
            continue
        if rest[0] != "--server" or len(rest) < 2:
            print(f"tcptw_wire: bad argument {rest[0]!r}", file=sys.stderr)
            return 2
        addr, _, port = rest[1].rpartition(":")
        servers.add((addr.strip("[]"), int(port)))
        rest = rest[2:]

    flows = {}
    packets = 0
    with open(path, "rb") as f:
        try:
            reader = dpkt.pcap.Reader(f)
        except ValueError as e:
            print(f"tcptw_wire: {path}: {e}", file=sys.stderr)
            return 1
        linktype = reader.datalink()
        global PACKET
        try:
            for _, buf in reader:
                PACKET += 1
                try:
                    ip = l3_of(linktype, buf)
                except (dpkt.UnpackError, IndexError):
                    continue
                if ip is None or not isinstance(ip.data, dpkt.tcp.TCP):
                    continue
                tcp = ip.data
                packets += 1
                src = (addr_str(ip.src), tcp.sport)
                dst = (addr_str(ip.dst), tcp.dport)
                flags = tcp.flags
                plen = len(tcp.data)
                syn = flags & (dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK | \
                               dpkt.tcp.TH_RST) == dpkt.tcp.TH_SYN
                if (dst, src) in flows:
                    flows[(dst, src)].from_server(tcp, flags, plen)
                elif syn and (src, dst) not in flows and \
                        (not servers or dst in servers):
                    flows[(src, dst)] = Flow(src, dst)
                if (src, dst) not in flows:
                    continue
                if syn:
                    flows[(src, dst)].syn(tcp.seq)
                else:
                    flows[(src, dst)].from_client(tcp, flags, plen)
        except dpkt.NeedData:
            pass        # a trace cut short by the capture's end

    out = {"packets": packets, "flows": [], "totals": dict.fromkeys(COUNTS, 0),
           "peers": {}, "listeners": {}, "explain": EXPLAIN}
    for flow in flows.values():
        flow.finish()
        row = {"client": "%s %d" % flow.client,
               "server": "%s %d" % flow.server}
        row.update(dict(flow.c))
        out["flows"].append(row)
        peer = out["peers"].setdefault(flow.client[0],
                                       dict.fromkeys(COUNTS, 0))
        lst = out["listeners"].setdefault("%s %d" % flow.server,
                                          dict.fromkeys(COUNTS, 0))
        for k in COUNTS:
            out["totals"][k] += flow.c[k]
            peer[k] += flow.c[k]
            lst[k] += flow.c[k]
    json.dump(out, sys.stdout, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
