#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Socket and packet helpers for tcptw_listen.sh, tcptw_conntrack.sh and
# tcptw_paws_other.sh, for what tcptw_traffic (one blocking connection at
# a time) cannot do. Run it inside a namespace with `ip netns exec`.
# Every mode is bounded in time and prints one JSON line.
#
#   burst ADDR[,ADDR...] PORT N GAP_MS WINDOW_S
#       N non-blocking connects GAP_MS apart, all in flight together; after
#       WINDOW_S seconds count the ones that completed and close them all
#       (a socket still in SYN-SENT sends nothing when closed). With
#       several addresses, one burst to each in turn, a JSON line each
#       (one python start instead of one per address: seconds under TCG).
#   burst-send ADDR PORT N GAP_MS WINDOW_S RELEASE_CMD...
#       N connects as in burst (the caller drops the handshake-completing
#       ACKs, so with SYN cookies the server holds no state yet); once all
#       are connected on our side, run RELEASE_CMD (which lifts the drop),
#       send one byte on each, wait WINDOW_S and close them all with a RST
#       (SO_LINGER 0: a listener ignores it). "acked" counts the sockets
#       whose byte the server acknowledged.
#   echo-server ADDR PORT TIMEOUT_S
#       accept and echo, one thread per connection.
#   idle ADDR PORT IDLE_S [--user-timeout MS] [--keepalive IDLE,INTVL,CNT]
#       [--so-keepalive]
#       connect, echo "a", stay idle IDLE_S, send "b" and wait (bounded)
#       for its echo; prints the errno name the second exchange got.
#   connect ADDR PORT TIMEOUT_S
#       one blocking connect; prints "ok" or the errno name.
#   range-reuse SRC DST PORT LPORT SPARE KIND
#       (tcptw_port_range.sh) a socket bound to SRC with
#       IP_BIND_ADDRESS_NO_PORT and the one-port IP_LOCAL_PORT_RANGE LPORT
#       (KIND sysctl: no socket range; the caller narrowed the netns' one
#       to LPORT) connects to DST PORT, shuts its side, reads to the
#       server's FIN and closes: LPORT's tuple is now in TIME_WAIT here.
#       Then, at once, a second such socket connects (KIND socket,
#       sysctl; fw2: the same as socket, but the first socket closes
#       without the server's FIN, which the caller drops, and so leaves a
#       TIME_WAIT socket in the FIN_WAIT2 substate); or (KIND unspec) one with the range SPARE connects,
#       disconnects with connect(AF_UNSPEC) (a RST, and ECONNRESET left in
#       its sk_err), takes the range LPORT and connects again. Starts 20 ms
#       into a CLOCK_MONOTONIC second; "same_second" says whether the
#       server's FIN and the last connect() fell in that one second.
#       KIND late: as socket, the second socket 1.5 s after the first
#       closed (old enough for tcp_tw_reuse). Prints each connect()'s
#       outcome ("ok" or the errno name).
#   fw2-syn SRC DST PORT LPORT abort|close TIMEOUT_S   (tcptw_tw_fin_wait2.sh)
#       from SRC:LPORT (SO_REUSEADDR), a connection to a server that
#       answers 64 bytes and closes first; read to its FIN, then (abort)
#       close with SO_LINGER 0, whose RST the caller drops, so that the
#       server's socket stays in the FIN_WAIT2 substate, or (close) close
#       (TIME_WAIT on the server). Then connect again from SRC:LPORT, for
#       at most TIMEOUT_S. Prints each connect()'s outcome ("ok",
#       "timeout" or the errno name).
#   The two scapy modes serve several cases from one python start (an
#   import of scapy's layers takes 10-20 s under TCG): they print "ready"
#   on stderr once set up, and write each result to DIR/NAME.json.
#   paws-estab SRC DST DPORT K DIR old|new[,old|new...]   (the caller
#       drops the RSTs of the local stack) for each kind in turn, once
#       DIR/go.KIND exists (at most 120 s each), from source port 41000 +
#       its index: handshake by hand with timestamps, one good data
#       segment, then K data segments whose TSval is 100000 ticks older
#       (old: each one must be rejected by PAWS on the server's
#       established socket) or newer and in sequence (new: the control,
#       all accepted); the result to DIR/KIND.json.
#   paws-active IFACE DPORT[,DPORT...] K TIMEOUT_S KIND[,KIND...] DIR
#       (the caller drops the SYNs before the local stack sees them) until
#       DIR/stop exists or TIMEOUT_S has passed, answer the first K SYNs to
#       each DPORT, after its KIND, with a SYN-ACK whose ACK number is
#       right and whose TSecr is 1000 s past the SYN's TSval (bad) or
#       echoes it (good), or whose ACK number is 1000 too far and TSecr
#       as bad (badack: refused for its ACK, before PAWS is looked at);
#       counts the RSTs the client sends back; DIR/DPORT.json is
#       rewritten after each packet of DPORT.
#   backlog-rst PORT N HOLD_MS send|nosend [ADDR]
#       over lo (ADDR: 127.0.0.1 or ::1), N times: a connection whose client has 10 unread bytes
#       shuts down both ways (FIN-WAIT, receive side shut), then blocks in
#       recv() copying them into a page of a userfaultfd region: tcp_recvmsg
#       holds the socket lock while the copy waits for the page. The server
#       then sends 100 bytes (send: data after a receive shutdown, RFC 1122
#       wants a RST; nosend: the control, nothing), which lands in the
#       client's backlog; after HOLD_MS the page is supplied, recv()
#       returns, release_sock() processes the backlog in process context
#       and the client's stack sends that RST. Reports OutRsts before and
#       after the hold ("held": RSTs that waited for the release), the
#       resets the server saw, and the segments retransmitted (a data
#       segment resent while the first waits in the backlog would find the
#       socket gone and draw a second RST: the caller raises rto_min).

import errno
import json
import os
import select
import socket
import struct
import sys
import threading
import time


def out(d):
    print(json.dumps(d, sort_keys=True, separators=(",", ":")))
    sys.stdout.flush()


def out_file(path, d):
    """d as one JSON line in path, whole or not at all (a reader polls)"""
    with open(path + ".tmp", "w") as f:
        f.write(json.dumps(d, sort_keys=True, separators=(",", ":")) + "\n")
    os.rename(path + ".tmp", path)


def wait_file(path, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.1)
    return False


def burst(addr, port, n, gap_ms, window):
    socks = []
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    for _ in range(n):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect((addr, port))
        except BlockingIOError:
            pass
        socks.append(s)
        time.sleep(gap_ms / 1000.0)
    end = time.monotonic() + window
    done = {}
    while time.monotonic() < end and len(done) < n:
        pend = [s for s in socks if s.fileno() not in done]
        _, w, _ = select.select([], pend, [], max(0, end - time.monotonic()))
        for s in w:
            done[s.fileno()] = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    ok = sum(1 for e in done.values() if e == 0)
    failed = sum(1 for e in done.values() if e != 0)
    for s in socks:
        s.close()
    out({"attempts": n, "ok": ok, "failed": failed,
         "pending": n - ok - failed})


def burst_send(addr, port, n, gap_ms, window, cmd):
    import subprocess
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect((addr, port))
        except BlockingIOError:
            pass
        socks.append(s)
        time.sleep(gap_ms / 1000.0)
    end = time.monotonic() + 10
    done = {}
    while time.monotonic() < end and len(done) < n:
        pend = [s for s in socks if s.fileno() not in done]
        _, w, _ = select.select([], pend, [], max(0, end - time.monotonic()))
        for s in w:
            done[s.fileno()] = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    connected = sum(1 for e in done.values() if e == 0)
    subprocess.run(cmd, check=True)
    for s in socks:
        try:
            s.send(b"x")
        except OSError:
            pass
    time.sleep(window)
    acked = 0
    for s in socks:
        # struct tcp_info: tcpi_unacked is the u32 at offset 24.
        info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
        if struct.unpack_from("I", info, 24)[0] == 0:
            acked += 1
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        s.close()
    out({"attempts": n, "connected": connected, "acked": acked})


def echo_conn(c):
    try:
        while True:
            d = c.recv(4096)
            if not d:
                break
            c.sendall(d)
    except OSError:
        pass
    c.close()


def echo_server(addr, port, timeout):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(128)
    ls.settimeout(timeout)
    print("listening", file=sys.stderr, flush=True)
    n = 0
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ls.settimeout(max(0.1, end - time.monotonic()))
        try:
            c, _ = ls.accept()
        except socket.timeout:
            break
        n += 1
        threading.Thread(target=echo_conn, args=(c,), daemon=True).start()
    out({"accepted": n})


def idle(addr, port, idle_s, args):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    res = {"connect": "", "first": "", "second": "", "second_ms": 0}
    i = 0
    while i < len(args):
        if args[i] == "--user-timeout":
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT,
                         int(args[i + 1]))
            i += 2
        elif args[i] == "--keepalive":
            ki, kv, kc = (int(x) for x in args[i + 1].split(","))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, ki)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, kv)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, kc)
            i += 2
        elif args[i] == "--so-keepalive":
            # the netns' tcp_keepalive_* sysctls decide
            s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            i += 1
        else:
            raise SystemExit("idle: bad option " + args[i])
    s.settimeout(5)
    try:
        s.connect((addr, port))
        res["connect"] = "ok"
        s.sendall(b"a")
        res["first"] = "ok" if s.recv(16) == b"a" else "EPROTO"
    except OSError as e:
        res["connect" if not res["connect"] else "first"] = \
            errno.errorcode.get(e.errno, "timeout")
        out(res)
        return
    time.sleep(idle_s)
    t0 = time.monotonic()
    s.settimeout(30)
    try:
        s.sendall(b"b")
        d = s.recv(16)
        res["second"] = "ok" if d == b"b" else ("EOF" if not d else "EPROTO")
    except OSError as e:
        # socket.timeout (our own 30 s bound) has no errno; ETIMEDOUT
        # from the kernel (TCP_USER_TIMEOUT) has.
        res["second"] = errno.errorcode.get(e.errno, "timeout")
    res["second_ms"] = int((time.monotonic() - t0) * 1000)
    s.close()
    out(res)


def ts_opt(pkt):
    from scapy.layers.inet import TCP
    for k, v in pkt[TCP].options:
        if k == "Timestamp":
            return v
    return None


def connect(addr, port, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect((addr, port))
        res = "ok"
    except OSError as e:
        res = errno.errorcode.get(e.errno, "timeout")
    s.close()
    out({"connect": res})


IP_BIND_ADDRESS_NO_PORT = 24
IP_LOCAL_PORT_RANGE = 51


def set_range(s, port):
    # a __u32, high half the upper bound: above INT_MAX for ports past
    # 32767, which python's int form of setsockopt() refuses
    s.setsockopt(socket.SOL_IP, IP_LOCAL_PORT_RANGE,
                 struct.pack("=I", port << 16 | port))


def range_sock(fam, src, port):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(5)
    s.setsockopt(socket.SOL_IP, IP_BIND_ADDRESS_NO_PORT, 1)
    if port:
        set_range(s, port)
    s.bind((src, 0))
    return s


def try_connect(s, dst, port):
    try:
        s.connect((dst, port))
        return "ok"
    except OSError as e:
        if e.errno is None:
            return "timeout"
        return errno.errorcode.get(e.errno, str(e.errno))


def range_reuse(src, dst, port, lport, spare, kind):
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    own = lport if kind != "sysctl" else 0
    res = {"kind": kind}
    try:
        range_sock(fam, src, lport).close()
    except OSError as e:
        out({"unsupported": errno.errorcode.get(e.errno, str(e.errno))})
        return
    now = time.monotonic()
    time.sleep(1.02 - (now - int(now)))
    sec = int(time.monotonic())
    s = range_sock(fam, src, own)
    res["first"] = try_connect(s, dst, port)
    if res["first"] == "ok":
        res["lport"] = s.getsockname()[1]
        s.shutdown(socket.SHUT_WR)
        if kind == "fw2":
            # the caller drops the server's FIN: once ours is acked the
            # orphan is a TIME_WAIT socket in the FIN_WAIT2 substate
            time.sleep(0.3)
        else:
            while s.recv(4096):
                pass
    s.close()
    if kind == "unspec":
        s = range_sock(fam, src, spare)
        res["spare"] = try_connect(s, dst, port)
        # connect(AF_UNSPEC): tcp_disconnect() resets the connection and
        # leaves ECONNRESET in sk_err for the next connect()
        unspec_connect(s)
        set_range(s, lport)
    else:
        if kind == "late":
            time.sleep(1.5)
        s = range_sock(fam, src, own)
    res["second"] = try_connect(s, dst, port)
    res["same_second"] = int(time.monotonic()) == sec
    s.close()
    out(res)


def fw2_syn(src, dst, port, lport, how, timeout):
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    res = {}
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(5)
    s.bind((src, lport))
    res["first"] = try_connect(s, dst, port)
    if res["first"] == "ok":
        s.sendall(b"x" * 64)
        while s.recv(4096):
            pass
    # the server's FIN is in and ACKed: its socket waits in FIN_WAIT2
    time.sleep(0.2)
    if how == "abort":
        # a RST the caller drops: the server's socket stays in FIN_WAIT2
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
    s.close()
    time.sleep(0.2)
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(timeout)
    s.bind((src, lport))
    res["second"] = try_connect(s, dst, port)
    s.close()
    out(res)


def unspec_connect(s):
    # python's connect() takes an address of the socket's own family:
    # libc's, with a zeroed sockaddr (sa_family AF_UNSPEC)
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    sa = ctypes.create_string_buffer(16)
    if libc.connect(s.fileno(), sa, len(sa)) != 0:
        raise OSError(ctypes.get_errno(), "connect(AF_UNSPEC)")


def paws_estab(src, dst, dport, k, d, kinds):
    # the two layers and the senders, not scapy.all: under TCG importing
    # every layer took seconds of each case
    from scapy.config import conf
    conf.verb = 0
    print("ready", file=sys.stderr, flush=True)
    for i, kind in enumerate(kinds):
        if not wait_file(os.path.join(d, "go." + kind), 120):
            raise SystemExit("no go." + kind + " in 120 s")
        out_file(os.path.join(d, kind + ".json"),
                 paws_estab_one(src, dst, dport, 41000 + i, k, kind == "old"))


def paws_estab_one(src, dst, dport, sport, k, old):
    from scapy.layers.inet import IP, TCP
    from scapy.sendrecv import sr1, send
    isn = 1000000
    ts0 = 5000000
    syn = IP(src=src, dst=dst) / TCP(
        sport=sport, dport=dport, flags="S", seq=isn, window=64240,
        options=[("MSS", 1460), ("SAckOK", b""), ("Timestamp", (ts0, 0)),
                 ("NOP", None), ("WScale", 7)])
    sa = sr1(syn, timeout=5)
    if sa is None or (sa[TCP].flags & 0x12) != 0x12:
        return {"error": "no SYN-ACK", "injected": 0}
    srv_ts = ts_opt(sa)[0]
    rcv = sa[TCP].seq + 1

    def seg(seq, tsval, flags, payload=b""):
        return IP(src=src, dst=dst) / TCP(
            sport=sport, dport=dport, flags=flags, seq=seq, ack=rcv,
            window=502,
            options=[("NOP", None), ("NOP", None),
                     ("Timestamp", (tsval, srv_ts))]) / payload

    send(seg(isn + 1, ts0 + 1, "A"))
    # A good segment: the server's ts_recent becomes ts0 + 2.
    send(seg(isn + 1, ts0 + 2, "PA", b"x"))
    time.sleep(0.3)
    # Old TSval, in-window sequence number: PAWS must reject each one.
    # The control sends newer TSvals, in sequence: all accepted.
    for i in range(k):
        if old:
            send(seg(isn + 2, ts0 + 2 - 100000, "PA", b"y"))
        else:
            send(seg(isn + 2 + i, ts0 + 3 + i, "PA", b"y"))
        time.sleep(0.05)
    return {"injected": k, "sport": sport, "old": old}


def paws_active(iface, dports, k, timeout, kinds, d):
    from scapy.config import conf
    from scapy.layers.inet import IP, TCP
    from scapy.sendrecv import AsyncSniffer, send
    conf.verb = 0
    kind_of = dict(zip(dports, kinds))
    states = {p: {"injected": 0, "rsts": 0, "syns": 0} for p in dports}

    def on_pkt(p):
        if IP not in p or TCP not in p or p[TCP].dport not in kind_of:
            return
        t = p[TCP]
        dport = t.dport
        kind = kind_of[dport]
        state = states[dport]
        if t.flags & 0x04:
            state["rsts"] += 1
            out_file(os.path.join(d, "%d.json" % dport), state)
            return
        if (t.flags & 0x12) != 0x02:
            return
        state["syns"] += 1
        if state["injected"] >= k:
            out_file(os.path.join(d, "%d.json" % dport), state)
            return
        ts = ts_opt(p)
        if ts is None:
            return
        good = kind == "good"
        tsecr = ts[0] if good else (ts[0] + 1000000) % (1 << 32) or 1
        ack = (t.seq + (1001 if kind == "badack" else 1)) % (1 << 32)
        sa = IP(src=p[IP].dst, dst=p[IP].src) / TCP(
            sport=dport, dport=t.sport, flags="SA", seq=777000,
            ack=ack, window=64240,
            options=[("MSS", 1460), ("NOP", None), ("NOP", None),
                     ("Timestamp", (123456, tsecr))])
        send(sa)
        state["injected"] += 1
        out_file(os.path.join(d, "%d.json" % dport), state)

    # "ready" only once the capture socket is open: on a slow guest
    # (5.10 under TCG, machine shared) that took longer than the fixed
    # second this used to wait, and the client's SYNs went by unseen.
    import threading
    capturing = threading.Event()
    sn = AsyncSniffer(iface=iface, prn=on_pkt, store=False,
                      started_callback=capturing.set)
    sn.start()
    if not capturing.wait(60):
        raise SystemExit("sniffer did not start in 60 s")
    for p in dports:
        out_file(os.path.join(d, "%d.json" % p), states[p])
    time.sleep(0.2)
    print("ready", file=sys.stderr, flush=True)
    # The caller's clients may take seconds to start on a slow guest: wait
    # for its word (DIR/stop) rather than a fixed time.
    wait_file(os.path.join(d, "stop"), timeout)
    sn.stop()
    out(states)


def tcp_mib(name="OutRsts"):
    with open("/proc/net/snmp") as f:
        rows = [l.split() for l in f if l.startswith("Tcp:")]
    return int(rows[1][rows[0].index(name)])


class Uffd:
    """A userfaultfd region of npages anonymous pages (x86-64 numbers)."""
    API, REGISTER, ZEROPAGE = 0x3F, 0x00, 0x04

    @staticmethod
    def _iowr(nr, size):
        return (3 << 30) | (size << 16) | (0xAA << 8) | nr

    def __init__(self, npages):
        import ctypes
        import fcntl
        import mmap
        import struct
        self.ioctl, self.pack = fcntl.ioctl, struct.pack
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.syscall(323, os.O_CLOEXEC | os.O_NONBLOCK)
        if self.fd < 0:
            raise SystemExit("userfaultfd: " +
                             os.strerror(ctypes.get_errno()))
        self.page = mmap.PAGESIZE
        self.mm = mmap.mmap(-1, npages * self.page,
                            mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.mm))
        fcntl.ioctl(self.fd, self._iowr(self.API, 24),
                    bytearray(struct.pack("QQQ", 0xAA, 0, 0)))
        fcntl.ioctl(self.fd, self._iowr(self.REGISTER, 32),
                    bytearray(struct.pack("QQQQ", self.base,
                                          npages * self.page, 1, 0)))

    def view(self, i, n):
        return memoryview(self.mm)[i * self.page:i * self.page + n]

    def wait_fault(self, timeout):
        """The address of the next fault, or None after timeout."""
        import struct
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return None
        msg = os.read(self.fd, 32)
        event, = struct.unpack_from("B", msg, 0)
        addr, = struct.unpack_from("Q", msg, 16)
        return addr if event == 0x12 else None

    def supply(self, i):
        self.ioctl(self.fd, self._iowr(self.ZEROPAGE, 32),
                   bytearray(self.pack("QQQq", self.base + i * self.page,
                                       self.page, 0, 0)))


def backlog_rst(port, n, hold_ms, send, addr):
    uf = Uffd(n)
    ls = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(8)
    ls.settimeout(10)
    res = {"n": n, "held": 0, "rsts": 0, "resets_seen": 0, "faults": 0,
           "copied": 0}
    retrans0 = tcp_mib("RetransSegs")
    for i in range(n):
        c = socket.create_connection((addr, port), timeout=10)
        s, _ = ls.accept()
        s.settimeout(10)
        for x in (c, s):
            x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b"x" * 10)
        end = time.monotonic() + 10
        while time.monotonic() < end and \
                not select.select([c], [], [], 0.05)[0]:
            pass
        c.shutdown(socket.SHUT_RDWR)
        if s.recv(100) != b"":
            raise SystemExit("server: data instead of the client's FIN")
        got = []
        t = threading.Thread(target=lambda: got.append(
            c.recv_into(uf.view(i, 10), 10)))
        t.start()
        if uf.wait_fault(10) is None:
            raise SystemExit("recv() did not fault on its page in 10 s")
        res["faults"] += 1
        before = tcp_mib()
        if send:
            s.sendall(b"y" * 100)
        time.sleep(hold_ms / 1000.0)
        if tcp_mib() == before:
            res["held"] += 1
        uf.supply(i)
        t.join(10)
        if t.is_alive():
            raise SystemExit("recv() still blocked after its page came")
        res["copied"] += got[0] if got else 0
        time.sleep(0.05)
        res["rsts"] += tcp_mib() - before
        # the server's socket, in CLOSE-WAIT since the client's FIN, is
        # closed by the RST (tcpi_state 7, TCP_CLOSE)
        if s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0] == 7:
            res["resets_seen"] += 1
        c.close()
        s.close()
    res["retrans"] = tcp_mib("RetransSegs") - retrans0
    out(res)


def main(a):
    if not a:
        raise SystemExit(__doc__)
    m = a[0]
    if m == "burst":
        for addr in a[1].split(","):
            burst(addr, int(a[2]), int(a[3]), int(a[4]), float(a[5]))
    elif m == "burst-send":
        burst_send(a[1], int(a[2]), int(a[3]), int(a[4]), float(a[5]), a[6:])
    elif m == "echo-server":
        echo_server(a[1], int(a[2]), float(a[3]))
    elif m == "idle":
        idle(a[1], int(a[2]), float(a[3]), a[4:])
    elif m == "connect":
        connect(a[1], int(a[2]), float(a[3]))
    elif m == "range-reuse":
        range_reuse(a[1], a[2], int(a[3]), int(a[4]), int(a[5]), a[6])
    elif m == "fw2-syn":
        fw2_syn(a[1], a[2], int(a[3]), int(a[4]), a[5], float(a[6]))
    elif m == "paws-estab":
        paws_estab(a[1], a[2], int(a[3]), int(a[4]), a[5], a[6].split(","))
    elif m == "paws-active":
        paws_active(a[1], [int(p) for p in a[2].split(",")], int(a[3]),
                    float(a[4]), a[5].split(","), a[6])
    elif m == "backlog-rst":
        backlog_rst(int(a[1]), int(a[2]), int(a[3]), a[4] == "send",
                    a[5] if len(a) > 5 else "127.0.0.1")
    else:
        raise SystemExit("unknown mode " + m)


if __name__ == "__main__":
    main(sys.argv[1:])
