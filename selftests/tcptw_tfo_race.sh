#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# A TCP Fast Open listener overflowing inside tcp_conn_request():
#
#   cli 198.18.4.1 --eth0---eth0-- srv 198.18.4.2:8200..8200+ROUNDS-1
#   tcp_fastopen 0x5 (no cookie)   tcp_fastopen 0x602, listen(1), never
#   one sender pinned to each CPU  accept()s
#
# tcp_conn_request() checks the accept queue, then (Fast Open) creates the
# child itself through tcp_v4_syn_recv_sock(), which checks it again. If
# another CPU fills the queue in between, the second check counts the
# overflow: one ListenOverflows increase, inside tcp_conn_request(). A
# module that also hooked tcp_v4_syn_recv_sock() saw it from both hooks
# and counted it twice (16 for 12 on 6.1); tcptw counts it once, from
# tcp_conn_request()'s delta, as the SYN's overflow.
#
# The test build (TCPTW_TEST_KO) holds every Fast Open child's creation
# for test_tfo_delay_us, so the window opens each time: per round, a fresh
# listener gets one child (backlog 1 of max 1, not full), then two data
# SYNs from two CPUs, half a delay apart, both pass the first check while
# the first child is held, and the second, when its own hold ends, finds
# the first child queued and the queue full. Asserted: ListenOverflows delta
# >= 1 (the window opened), srv ListenOverflow == ListenOverflows delta
# (each increase counted once), ListenOverflowSyn + ListenOverflowAck ==
# ListenOverflow, ListenOverflowSyn >= the Fast Open children refused
# (TCPFastOpenPassiveFail > 0: the SYN, not the ACK of its fallback
# handshake) and == rounds when every round's window opened, and the
# kernel log stays clean.
#
# The same window at a handshake's ACK (ack race): the test build holds
# one ACK at tcp_v4_syn_recv_sock()'s hook, after it ran and before the
# kernel tests the accept queue, once the client arms it
# (test_ack_holds), until the queue turns full or not full, whichever it
# was not at the hook's entry (at most test_ack_delay_us;
# test_ack_entered counts the ACKs at the hook). A listener with
# TCP_DEFER_ACCEPT makes each connection reach that test when its client
# sends, so the order is set by the clients, each step waiting for the
# server's accept queue or the hook's count to show the last one done
# (not for a clock: a starved vCPU must not reorder them): "drain" holds
# an ACK that finds the queue full while the server accept()s a child
# (the kernel then finds room: ListenOverflows +0), "fill" holds an ACK
# that finds room while a second one's child fills the queue (the kernel
# then finds it full: the held one overflows). "fill" needs both
# handshakes pending at once, which a backlog of one cannot hold on 5.10
# (its inet_csk_reqsk_queue_is_full() tests >=, later kernels >: the
# second SYN gets a cookie, whose child is queued at its handshake's ACK,
# TCP_DEFER_ACCEPT or not), so its listener takes a backlog of two and no
# SYN cookie may be sent. Asserted in both: the listeners row == the
# ListenOverflows delta, whatever the hook could see at its entry (the
# test build counts the ACKs that found the queue full,
# test_ack_full_seen, to show the window opened).

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nstat
require_module
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: $PY not installed"; exit $ksft_skip; }

ROUNDS=4
PORT0=8200
SRV=198.18.4.2
DELAY_US=200000
DMESG_START=$(dmesg 2>/dev/null | wc -l)

# the listeners: one per round, Fast Open on, backlog 1, never accepting
SERVER_PY='
import socket, sys, time
socks = []
for i in range(int(sys.argv[3])):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
    s.bind((sys.argv[1], int(sys.argv[2]) + i))
    s.listen(1)
    socks.append(s)
print("listening", flush=True)
time.sleep(float(sys.argv[4]))
'

# per port: one Fast Open connect, then two at once, one per CPU; every
# socket is aborted (RST) at the end so that nothing retransmits later
CLIENT_PY='
import multiprocessing as mp, os, socket, struct, sys, time
srv, port0, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ncpu = os.cpu_count()

def tfo(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.setblocking(False)
    try:
        s.sendto(b"x", socket.MSG_FASTOPEN, (srv, port))
    except BlockingIOError:
        pass
    return s

def sender(cpu, port, barrier, hold):
    os.sched_setaffinity(0, {cpu % ncpu})
    barrier.wait()
    # the second SYN half a delay later: past the first check while the
    # first child is held, at the second once that child is queued
    time.sleep(cpu * float(sys.argv[5]) / 2)
    s = tfo(port)
    hold.wait()
    s.close()

keep = []
for r in range(rounds):
    keep.append(tfo(port0 + r))
    time.sleep(float(sys.argv[4]))
    b, h = mp.Barrier(2), mp.Event()
    ps = [mp.Process(target=sender, args=(c, port0 + r, b, h)) for c in (0, 1)]
    for p in ps:
        p.start()
    time.sleep(float(sys.argv[4]))
    h.set()
    for p in ps:
        p.join(30)
for s in keep:
    s.close()
print("rounds", rounds)
'

# race_begin KNOB=VALUE PROBE... : the test build loaded with KNOB, two
# CPUs, PROBE... attached, cli and srv joined by a veth pair. False when
# the test is over (skipped, or its setup failed).
race_begin()
{
	local knob=$1

	shift
	if ! have_test_build; then
		skip_test "no test build (TCPTW_TEST_KO unset: scripts/check.sh builds it)"
		return 1
	fi
	if [ "$(nproc)" -lt 2 ]; then
		skip_test "one CPU: the window needs a second one"
		return 1
	fi
	if ! { rmmod tcptw && timeout 120 insmod "$TCPTW_TEST_KO" "$knob"; }; then
		check_err 1 "insmod of the test build ($knob) failed"
		restore_module
		return 1
	fi
	if ! probe_gate "$@"; then
		restore_module
		return 1
	fi
	setup_ns cli srv
	veth_pair "$cli" "$srv" eth0 198.18.4.1/24 $SRV/24 &&
		busywait 3000 link_up "$cli" eth0 &&
		busywait 3000 link_up "$srv" eth0 ||
		check_err 1 "topology setup failed"
}

test_tfo_overflow()
{
	local name="tfo race: a Fast Open child overflowing inside tcp_conn_request, counted once"
	local ovf mod syn ack pf
	declare -A B A

	test_begin "$name"
	if ! race_begin test_tfo_delay_us=$DELAY_US tcp_conn_request \
		tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi
	nsx "$cli" sysctl -qw net.ipv4.tcp_fastopen=5
	nsx "$srv" sysctl -qw net.ipv4.tcp_fastopen=0x602
	bg_start "$TMPDIR_T/srv" ip netns exec "$srv" "$PY" -c "$SERVER_PY" \
		$SRV $PORT0 $ROUNDS 120
	busywait 30000 grep -q listening "$TMPDIR_T/srv" ||
		check_err 1 "listeners did not start"
	ns_snapshot "$srv" B s_
	timeout 120 ip netns exec "$cli" "$PY" -c "$CLIENT_PY" $SRV $PORT0 \
		$ROUNDS $(( 2 * DELAY_US / 1000000 + 1 )) \
		"$(awk -v us=$DELAY_US 'BEGIN { print us / 1e6 }')" >"$TMPDIR_T/cli.out"
	check_err $? "Fast Open client failed"
	# the aborts' RSTs land; nothing is left to retransmit
	sleep 1
	ns_snapshot "$srv" A s_
	ovf=$(( ${A[s_mib_TcpExtListenOverflows]:-0} - ${B[s_mib_TcpExtListenOverflows]:-0} ))
	mod=$(( ${A[s_tw_ListenOverflow]:-0} - ${B[s_tw_ListenOverflow]:-0} ))
	syn=$(( ${A[s_tw_ListenOverflowSyn]:-0} - ${B[s_tw_ListenOverflowSyn]:-0} ))
	ack=$(( ${A[s_tw_ListenOverflowAck]:-0} - ${B[s_tw_ListenOverflowAck]:-0} ))
	diag "srv TcpExtListenOverflows +$ovf TCPFastOpenPassive +$(( ${A[s_mib_TcpExtTCPFastOpenPassive]:-0} - ${B[s_mib_TcpExtTCPFastOpenPassive]:-0} )) | ListenOverflow +$mod (syn $syn ack $ack)"
	check_gt "srv ListenOverflows delta (the window opened)" "$ovf" 0
	check_eq "srv ListenOverflow == ListenOverflows delta" "$mod" "$ovf"
	check_eq "srv ListenOverflowSyn + ListenOverflowAck == ListenOverflow" \
		$(( syn + ack )) "$mod"
	# each Fast Open child refused inside (TCPFastOpenPassiveFail) is one
	# SYN's overflow; what follows (its plain handshake's ACK at the full
	# queue) is ListenOverflowAck. One per round when every window
	# opened; a round whose SYNs came too late for it (a busy guest) has
	# no Fast Open child refused, and is no miss.
	pf=$(( ${A[s_mib_TcpExtTCPFastOpenPassiveFail]:-0} - ${B[s_mib_TcpExtTCPFastOpenPassiveFail]:-0} ))
	diag "Fast Open children refused (TCPFastOpenPassiveFail): $pf in $ROUNDS rounds"
	check_gt "srv TCPFastOpenPassiveFail delta (the window opened)" "$pf" 0
	check_range "srv ListenOverflowSyn (TCPFastOpenPassiveFail..ListenOverflow)" \
		"$syn" "$pf" "$mod"
	[ "$pf" -eq $ROUNDS ] &&
		check_eq "srv ListenOverflowSyn == rounds (every window opened)" "$syn" $ROUNDS
	cleanup_all_ns
	restore_module
	check_eq "reload of the normal build" "$?" 0
	check_dmesg_clean "$DMESG_START"
	log_test "$name"
}

# --- a handshake's ACK whose accept queue moves while its hook runs ---
ACK_DELAY_US=500000
ACK_PORT=8300

# listen(1) (full with two children; "fill": listen(2), full with three)
# and TCP_DEFER_ACCEPT: a handshake's
# pure ACK waits for data, so each connection reaches the accept queue's
# test when its client sends. The listener's accept queue (tcp_info's
# tcpi_unacked, for a listener) is published in QFILE whenever it changes,
# so that the client moves on only when the server has queued a child.
# "drain": accept() every child as soon as a held ACK has found the queue
# full; "fill": never accept()
ACK_SERVER_PY='
import os, socket, struct, sys, time
addr, port, mode, qfile = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
seen = "/sys/module/tcptw/parameters/test_ack_full_seen"
os.sched_setaffinity(0, {1})
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 30)
s.bind((addr, port))
s.listen(2 if mode == "fill" else 1)

def qlen():
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return struct.unpack_from("I", info, 24)[0]

n0 = int(open(seen).read())
print("listening", flush=True)
last, got, end = -1, None, time.time() + 120
while time.time() < end:
    q = qlen()
    if q != last:
        with open(qfile + ".new", "w") as f:
            f.write(str(q))
        os.rename(qfile + ".new", qfile)
        last = q
    if mode == "drain" and got is None and int(open(seen).read()) != n0:
        s.settimeout(10)
        got = []
        try:
            while len(got) < 3:
                got.append(s.accept()[0])
        except socket.timeout:
            pass
        print("accepted", len(got), flush=True)
    time.sleep(0.002)
'

# Each step waits for the server's queue or the hook's count, not for a
# clock, so that a starved vCPU delays the scenario instead of reordering
# it. Two children fill the queue ("fill": take two of its three places),
# then one hold is armed and B sends from CPU 0: its ACK is held at the
# hook until the queue changes. "drain": B's ACK finds the queue full, the
# server accept()s, the kernel finds room. "fill": B's ACK finds room; C
# sends from CPU 1 once B's is at the hook, C's child fills the queue, the
# kernel finds it full for B. Every socket is aborted (RST) at the end.
ACK_CLIENT_PY='
import multiprocessing as mp, os, socket, struct, sys, time
srv, port, mode, qfile = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
keep = []

def conn():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.connect((srv, port))
    keep.append(s)
    return s

# until the queue holds n children (or more, unless exact); false after 30 s
def wait_queue(n, exact=False):
    end = time.time() + 30
    while time.time() < end:
        try:
            q = int(open(qfile).read())
            if q == n or (q > n and not exact):
                return True
        except (OSError, ValueError):
            pass
        time.sleep(0.005)
    return False

# a step the scenario cannot go on without
def need_queue(n):
    if not wait_queue(n):
        sys.exit("the accept queue never held %d" % n)

def pin(cpu):
    os.sched_setaffinity(0, {cpu})

params = "/sys/module/tcptw/parameters/"
t0 = time.time()

def acks():
    return int(open(params + "test_ack_entered").read())

# the next ACK to reach the hook is held there
def arm():
    with open(params + "test_ack_holds", "w") as f:
        f.write("1")

# from CPU cpu, once the hook has counted an ACK since e0 (at once if None);
# the send returns when the ACK has gone through the stack here, held or not
def send(name, s, cpu, e0):
    pin(cpu)
    end = time.time() + 30
    while e0 is not None and acks() == e0 and time.time() < end:
        time.sleep(0.001)
    t, e = time.time() - t0, acks()
    s.send(b"x")
    print("sent: %s %.3f-%.3f (ACKs at the hook before: %d, after: %d)" %
          (name, t, time.time() - t0, e, acks()), flush=True)

if mode == "drain":
    pin(0)
    b = conn()
    pin(1)
    for n in (1, 2):
        conn().send(b"x")
        need_queue(n)
    arm()
    send("b", b, 0, None)
    # the server has taken all three (else the run shows it)
    wait_queue(0, exact=True)
else:
    pin(1)
    for n in (1, 2):
        conn().send(b"x")
        need_queue(n)
    b, c = conn(), conn()
    arm()
    e0 = acks()
    # B on CPU 0 (a process forked here starts on CPU 1, then moves), C on
    # CPU 1 once the ACK of B is at the hook
    ps = [mp.Process(target=send, args=a)
          for a in (("b", b, 0, None), ("c", c, 1, e0))]
    for p in ps:
        p.start()
    for p in ps:
        p.join(30)
    wait_queue(3)
for s in keep:
    s.close()
print("done")
'

# test_count NAME : the test build's count in parameter NAME, 0 without it
test_count()
{
	cat "/sys/module/tcptw/parameters/$1" 2>/dev/null || echo 0
}

# ack_race MODE: one run of a scenario, on a port of its own; sets SEEN
# OVF MOD ACK ROW ACCEPTED COOKIES CLI_OUT (the client's output), and counts in
# MISMATCHES a run whose row or counter is not the MIB's (a second run
# forgives no mismatch)
ack_race()
{
	local mode=$1 port=$((ACK_PORT + ACK_RUNS)) seen0 entered0 row spid
	declare -A B A

	ACK_RUNS=$((ACK_RUNS + 1))
	bg_start "$TMPDIR_T/srv-$port" ip netns exec "$srv" "$PY" -c \
		"$ACK_SERVER_PY" $SRV "$port" "$mode" "$TMPDIR_T/q-$port"
	spid=$BG_PID
	busywait 30000 grep -q listening "$TMPDIR_T/srv-$port" || {
		diag "$mode: listener did not start"
		return 1
	}
	ns_snapshot "$srv" B s_
	seen0=$(test_count test_ack_full_seen)
	entered0=$(test_count test_ack_entered)
	CLI_OUT=$TMPDIR_T/cli-$port.out
	timeout 90 ip netns exec "$cli" "$PY" -c "$ACK_CLIENT_PY" $SRV "$port" \
		"$mode" "$TMPDIR_T/q-$port" >"$CLI_OUT" 2>&1 || {
		diag "$mode: client failed: $(tail -n 1 "$CLI_OUT")"
		return 1
	}
	# the aborts' RSTs land; nothing is left to retransmit
	sleep 1
	ns_snapshot "$srv" A s_
	SEEN=$(( $(test_count test_ack_full_seen) - seen0 ))
	ENTERED=$(( $(test_count test_ack_entered) - entered0 ))
	OVF=$(( ${A[s_mib_TcpExtListenOverflows]:-0} - ${B[s_mib_TcpExtListenOverflows]:-0} ))
	MOD=$(( ${A[s_tw_ListenOverflow]:-0} - ${B[s_tw_ListenOverflow]:-0} ))
	ACK=$(( ${A[s_tw_ListenOverflowAck]:-0} - ${B[s_tw_ListenOverflowAck]:-0} ))
	COOKIES=$(( ${A[s_mib_TcpExtSyncookiesSent]:-0} - ${B[s_mib_TcpExtSyncookiesSent]:-0} ))
	row=$(listener_row "$srv" $SRV "$port")
	ROW=$(awk '{ print $5 + $6 }' <<<"${row:-x x x x 0 0}")
	ACCEPTED=$(grep -c "accepted 3" "$TMPDIR_T/srv-$port")
	# its queue polled every 2 ms for 120 s: not beside the next run
	kill "$spid" 2>/dev/null
	bg_wait "$spid"
	diag "$mode (port $port): ACKs at the hook $ENTERED, with the queue full at the hook's entry $SEEN | ListenOverflows +$OVF | ListenOverflow +$MOD (ack $ACK) | SyncookiesSent +$COOKIES | row: ${row:--}"
	[ "$mode" = fill ] && diag "$mode: $(grep sent: "$CLI_OUT" | tr '\n' ' ')"
	if [ "$ROW" != "$OVF" ] || [ "$MOD" != "$OVF" ]; then
		MISMATCHES=$((MISMATCHES + 1))
		diag "$mode: row $ROW, counter $MOD, MIB $OVF: a mismatch, which no rerun forgives"
	fi
}

# did the run open the window as planned? (rerun_once's checks)
ack_drain_opened()
{
	[ "$SEEN" = 1 ] && [ "$OVF" = 0 ] && [ "$ACCEPTED" = 1 ] && return 0
	echo "drain: $SEEN held ACKs found the queue full, $OVF overflows, all three accepted: $ACCEPTED"
	return 1
}

ack_fill_opened()
{
	[ $((OVF - SEEN)) = 1 ] && [ "$ACK" = "$OVF" ] && return 0
	echo "fill: $OVF overflows ($ACK at the ACK), $SEEN foreseen by the hook; $(grep sent: "$CLI_OUT" | tr '\n' ' ')"
	return 1
}

test_ack_race()
{
	local name="ack race: the accept queue drained or filled while the ACK's hook runs, the row == ListenOverflows"
	local SEEN OVF MOD ACK ROW ACCEPTED COOKIES ENTERED CLI_OUT MISMATCHES=0 ACK_RUNS=0

	test_begin "$name"
	if ! race_begin test_ack_delay_us=$ACK_DELAY_US tcp_v4_syn_recv_sock; then
		log_test "$name"
		return
	fi

	# drained: the hook finds the queue full, accept() makes room before
	# the kernel looks, the kernel admits the child
	rerun_once ack_drain_opened true ack_race drain ||
		check_err 1 "drain: setup failed"
	check_eq "drain: the server accepted all three connections" "$ACCEPTED" 1
	check_eq "drain: ACKs that found the queue full at the hook (the window opened)" "$SEEN" 1
	check_eq "drain: ListenOverflows delta (the kernel found room)" "$OVF" 0
	check_eq "drain: ListenOverflow == ListenOverflows delta" "$MOD" "$OVF"
	check_eq "drain: listeners row overflow_syn + overflow_ack == ListenOverflows delta" "$ROW" "$OVF"

	# filled: both hooks find room, the first child fills the queue
	# before the kernel looks at the second (its retransmits find it full)
	rerun_once ack_fill_opened true ack_race fill ||
		check_err 1 "fill: setup failed"
	check_eq "fill: SYN cookies sent (a cookie's child is queued at its handshake, not when its client sends)" "$COOKIES" 0
	# the queue never shrinks: the held ACK is the one overflow its hook
	# did not see coming; its client's retransmits find the queue full
	check_eq "fill: ListenOverflows delta less the ACKs that found the queue full at the hook (the held one: the window opened)" $((OVF - SEEN)) 1
	check_eq "fill: ListenOverflow == ListenOverflows delta" "$MOD" "$OVF"
	check_eq "fill: ListenOverflowAck == ListenOverflows delta" "$ACK" "$OVF"
	check_eq "fill: listeners row overflow_syn + overflow_ack == ListenOverflows delta" "$ROW" "$OVF"
	check_eq "runs whose row or counter was not the MIB's, first runs included" "$MISMATCHES" 0

	cleanup_all_ns
	restore_module
	check_eq "reload of the normal build" "$?" 0
	check_dmesg_clean "$DMESG_START"
	log_test "$name"
}

tests_run \
	test_tfo_overflow \
	test_ack_race
