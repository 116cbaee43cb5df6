#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Per-netns isolation, /proc files of new namespaces, the control file's
# permissions and syntax, and rmmod/insmod under traffic.
#
#   (a)  cli 198.18.0.1 --eth0---eth0-- srv 198.18.0.2:8080   idle (no links)
#        tcp_max_tw_buckets=10 on srv, 40 server-closed connections
#   (b)  a namespace created now (after insmod)
#   (c)  srv of (a): reset by nobody / root without CAP_NET_ADMIN / root
#   (d)  the NAT topology of tcptw_nat_paws.sh with traffic in a bounded
#        background loop, 8 x (rmmod tcptw; insmod $TCPTW_KO)
#        (TCPTW_RELOAD_CYCLES; `make soak` runs 1000 under NAT churn)
#   (e)  insmod kprobes=1 hooks with kprobes (fprobes on 6.12, 7.2) only, and
#        kprobes=maybe is refused

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_topo.sh"

require_root
require_cmd ip nstat setpriv
require_traffic
require_module

PY=/usr/bin/python3
# a cycle takes 9 s of a 6.1 guest under TCG, 15 s beside another guest
RELOAD_CYCLES=${TCPTW_RELOAD_CYCLES:-8}
ABI_COUNTERS="TwCreated TwOverflow TwPawsRejected TwSynPawsRejected
TwSynSeqRejected TwSynRecycled TwAckSent TwRstSent TwKilledByRst"
DMESG_START=$(dmesg 2>/dev/null | wc -l)

# The errno of writing DATA (python escapes allowed) to / reading FILE,
# or OK: prints e.g. EPERM.
PROC_IO='import errno, os, sys
op, path = sys.argv[1], sys.argv[2]
try:
    if op == "w":
        data = sys.argv[3].encode().decode("unicode_escape").encode()
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    else:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.read(fd, 65536)
        finally:
            os.close(fd)
    print("OK")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))'

# proc_io NS WHO r|w FILE [DATA]; WHO: root, nobody, nonetadmin
proc_io()
{
	local ns=$1 who=$2; shift 2
	local as=()

	case $who in
	nobody)	as=(setpriv --reuid=65534 --regid=65534 --clear-groups) ;;
	nonetadmin) as=(setpriv --bounding-set=-net_admin --inh-caps=-net_admin) ;;
	esac
	ip netns exec "$ns" "${as[@]}" "$PY" -c "$PROC_IO" "$@" 2>&1
}

counters_text()
{
	nsx "$1" cat "$TCPTW_PROC/counters" 2>&1
}

test_isolation()
{
	local b_ovf b_tw c_tw d_ovf d_tw d_ctw

	test_begin "isolation"
	setup_ns idle
	if ! pair_setup; then
		check_err 1 "setup failed"
		log_test "lifecycle: isolation: only the busy netns counts"
		return
	fi
	nsx "$srv" sysctl -qw net.ipv4.tcp_max_tw_buckets=10
	server_start "$srv" "$TMPDIR_T/iso.server.json" --listen 198.18.0.2:8080 \
		--count 40 --timeout 60 || check_err 1 "server did not start"
	b_ovf=$(mib "$srv" TcpExtTCPTimeWaitOverflow)
	b_tw=$(mib "$srv" TcpExtTW)
	c_tw=$(mib "$cli" TcpExtTW)
	timeout 90 "$TRAFFIC" client --connect 198.18.0.2:8080 --count 40 \
		--netns "$(nspath "$cli")" --barrier --timeout 60 \
		>"$TMPDIR_T/iso.client.json"
	check_err $? "client failed"
	bg_wait "$SERVER_PID"
	d_ovf=$(( $(mib "$srv" TcpExtTCPTimeWaitOverflow) - b_ovf ))
	d_tw=$(( $(mib "$srv" TcpExtTW) - b_tw ))
	d_ctw=$(( $(mib "$cli" TcpExtTW) - c_tw ))
	diag "client: $(cat "$TMPDIR_T/iso.client.json")"
	check_eq "srv TcpExt TCPTimeWaitOverflow" "$d_ovf" 30
	check_tw_mib "srv TcpExt TW" "$d_tw" 10
	# Nothing kills or recycles these within the test (new client port
	# each time): the sockets still there are the ones created.
	check_eq "srv TIME_WAIT sockets" "$(tw_sockets "$srv")" 10
	d_tw=$(tw_created_truth "$d_tw" "$(tw_sockets "$srv")")
	d_ctw=$(tw_created_truth "$d_ctw" "$(tw_sockets "$cli")")
	# The namespaces are fresh: absolute values are the deltas.
	check_mod_eq "srv TwOverflow == the 30 connections past the limit" \
		"$(tw_counter "$srv" TwOverflow)" 30
	check_mod_eq "srv TwCreated == TcpExt TW" \
		"$(tw_counter "$srv" TwCreated)" "$d_tw"
	check_mod_eq "cli TwCreated == cli TcpExt TW" \
		"$(tw_counter "$cli" TwCreated)" "$d_ctw"
	check_mod_eq "cli TwOverflow" "$(tw_counter "$cli" TwOverflow)" 0
	check_mod_eq "idle netns: sum of all counters" \
		"$(tw_counters_sum "$idle")" 0
	if [ "$HAVE_MODULE" = 1 ]; then
		check_eq "idle netns: events lines" \
			"$(nsx "$idle" cat "$TCPTW_PROC/events" | wc -l)" 0
	fi
	log_test "lifecycle: isolation: only the busy netns counts"
}

test_new_netns()
{
	local f names

	test_begin "new netns"
	if [ "$HAVE_MODULE" != 1 ]; then
		skip_test "tcptw not loaded"
		log_test "lifecycle: a netns created after insmod has the /proc files"
		return
	fi
	setup_ns fresh
	for f in counters events probes control; do
		ip netns exec "$fresh" test -e "$TCPTW_PROC/$f"
		check_err $? "$TCPTW_PROC/$f missing in a new netns"
	done
	names=$(nsx "$fresh" cat "$TCPTW_PROC/counters" |
		awk '{ print $1 }' | head -n 9 | tr '\n' ' ')
	check_eq "counters in ABI order" \
		"$([ "$names" = "$(echo $ABI_COUNTERS) " ] && echo 1 || echo 0)" 1
	diag "counters: $names"
	check_eq "fresh netns: sum of all counters" "$(tw_counters_sum "$fresh")" 0
	check_gt "probes lines" \
		"$(nsx "$fresh" cat "$TCPTW_PROC/probes" | wc -l)" 0
	# PROC_NET_SNMP6 compatibility promised by the ABI
	check_eq "nstat reads counters (TwCreated present)" \
		"$(ip netns exec "$fresh" env PROC_NET_SNMP6=$TCPTW_PROC/counters \
		   nstat -asz 2>/dev/null | grep -c '^TwCreated ')" 1
	log_test "lifecycle: a netns created after insmod has the /proc files"
}

test_reset()
{
	local before r data

	test_begin "reset"
	if [ "$HAVE_MODULE" != 1 ]; then
		skip_test "tcptw not loaded"
		log_test "lifecycle: control: permissions, syntax, reset"
		return
	fi
	if [ ! -x "$PY" ]; then
		skip_test "$PY missing"
		log_test "lifecycle: control: permissions, syntax, reset"
		return
	fi
	# srv of test_isolation has non-zero counters and events.
	before=$(counters_text "$srv")
	check_gt "srv TwOverflow before reset" "$(tw_counter "$srv" TwOverflow)" 0
	diag "capabilities of nonetadmin: $(ip netns exec "$srv" setpriv \
		--bounding-set=-net_admin --inh-caps=-net_admin \
		grep CapEff /proc/self/status | tr -s '\t' ' ')"

	r=$(proc_io "$srv" nobody w "$TCPTW_PROC/control" 'reset\n')
	diag "nobody writes reset: $r"
	# 0200 root: the VFS may refuse the open (EACCES) before the
	# module's CAP_NET_ADMIN check (EPERM); either is a refusal.
	check_eq "nobody: write reset refused" \
		"$( [ "$r" = EPERM ] || [ "$r" = EACCES ] && echo 1 || echo 0)" 1
	r=$(proc_io "$srv" nonetadmin w "$TCPTW_PROC/control" 'reset\n')
	check_eq "root without CAP_NET_ADMIN: write reset -> EPERM" \
		"$([ "$r" = EPERM ] && echo 1 || echo "$r")" 1
	r=$(proc_io "$srv" nobody r "$TCPTW_PROC/events")
	check_eq "nobody: read events -> EPERM" \
		"$([ "$r" = EPERM ] && echo 1 || echo "$r")" 1
	r=$(proc_io "$srv" nonetadmin r "$TCPTW_PROC/events")
	check_eq "root without CAP_NET_ADMIN: read events -> EPERM" \
		"$([ "$r" = EPERM ] && echo 1 || echo "$r")" 1
	r=$(proc_io "$srv" nobody r "$TCPTW_PROC/counters")
	check_eq "nobody: read counters -> OK" "$([ "$r" = OK ] && echo 1 || echo "$r")" 1
	check_eq "counters unchanged after refused resets" \
		"$([ "$(counters_text "$srv")" = "$before" ] && echo 1 || echo 0)" 1

	for data in 'foo' 'reset extra' '\n' '' 'resetx' 'reset\n\n' \
		'reset\x00junk' 'reset\x00' 'reset\x00\n'; do
		r=$(proc_io "$srv" root w "$TCPTW_PROC/control" "$data")
		check_eq "root writes '$data' -> EINVAL" \
			"$([ "$r" = EINVAL ] && echo 1 || echo "$r")" 1
	done
	check_eq "counters unchanged after invalid writes" \
		"$([ "$(counters_text "$srv")" = "$before" ] && echo 1 || echo 0)" 1

	r=$(proc_io "$srv" root w "$TCPTW_PROC/control" 'reset\n')
	check_eq "root writes 'reset\\n' -> OK" "$([ "$r" = OK ] && echo 1 || echo "$r")" 1
	check_eq "srv: sum of counters after reset" "$(tw_counters_sum "$srv")" 0
	check_eq "srv: events lines after reset" \
		"$(nsx "$srv" cat "$TCPTW_PROC/events" | wc -l)" 0
	# rows and what each CPU keeps aside for them go together
	check_eq "srv: peers and listeners rows after reset" \
		"$(nsx "$srv" awk 'FNR > 1' "$TCPTW_PROC/peers" "$TCPTW_PROC/listeners" | wc -l)" 0
	r=$(proc_io "$srv" root w "$TCPTW_PROC/control" 'reset')
	check_eq "root writes 'reset' (no newline) -> OK" \
		"$([ "$r" = OK ] && echo 1 || echo "$r")" 1
	log_test "lifecycle: control: permissions, syntax, reset"
}

# run_bounded SECS CMD... : run CMD for at most SECS seconds. timeout(1)
# cannot stop an rmmod or insmod stuck in the kernel (D state), and the
# suite would hang without a word: instead print where it is stuck (its
# kernel stack, the blocked tasks via sysrq-w) and fail.
run_bounded()
{
	local secs=$1 pid i rc out=$TMPDIR_T/bounded.out; shift

	# not on our stdout: a task stuck in D state would hold the pipe of
	# run_tests.sh open, and with it the whole suite
	"$@" </dev/null >"$out" 2>&1 &
	pid=$!
	for ((i = 0; i < secs * 5; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			rc=$?
			cat "$out"
			return $rc
		fi
		sleep 0.2
	done
	diag "'$*' still running after ${secs}s, state $(awk '/^State/ { print $2 }' "/proc/$pid/status" 2>/dev/null); kernel stack:"
	sed 's/^/#   /' "/proc/$pid/stack" 2>/dev/null
	echo w >/proc/sysrq-trigger 2>/dev/null
	dmesg | tail -n 80 | sed 's/^/#   /'
	kill -9 "$pid" 2>/dev/null
	return 124
}

test_reload()
{
	local i ok=0 stop=$TMPDIR_T/stop loop_pid out a b k paws d t0
	local name="lifecycle: $RELOAD_CYCLES rmmod/insmod cycles under NAT+PAWS traffic"

	test_begin "reload"
	if [ -z "$TCPTW_KO" ]; then
		skip_test "TCPTW_KO not set"
		log_test "$name"
		return
	fi
	if [ "$HAVE_MODULE" != 1 ] || [ ! -r "$TCPTW_KO" ]; then
		skip_test "module not loaded or $TCPTW_KO unreadable"
		log_test "$name"
		return
	fi
	if ! have_nat; then
		skip_test "nftables masquerade or conntrack unavailable"
		log_test "$name"
		return
	fi
	if ! nat_topo_setup; then
		check_err 1 "topology setup failed"
		log_test "$name"
		return
	fi
	server_start "$srv" "$TMPDIR_T/reload.server.json" \
		--listen $SRV_ADDR:$SRV_PORT --count 0 --timeout 900 ||
		check_err 1 "server did not start"

	declare -A S0=() S1=()
	ns_snapshot "$srv" S0 srv_
	ns_snapshot "$nat" S0 nat_
	# Bounded background traffic: at most 100 runs of 21 connections,
	# each run bounded to 20 s, until $stop exists.
	(
		for i in $(seq 100); do
			[ -e "$stop" ] && break
			timeout 30 "$TRAFFIC" client \
				--connect $SRV_ADDR:$SRV_PORT --count 21 \
				--netns "$(nspath "$c1"),$(nspath "$c2")" \
				--barrier --timeout 20 --verbose \
				>"$TMPDIR_T/reload.client.$i.json"
		done
	) &
	loop_pid=$!
	BG_PIDS+=("$loop_pid")

	t0=$SECONDS
	for i in $(seq "$RELOAD_CYCLES"); do
		run_bounded 60 rmmod tcptw || { diag "rmmod #$i failed"; break; }
		run_bounded 60 insmod "$TCPTW_KO" || { diag "insmod #$i failed"; break; }
		ok=$((ok + 1))
		sleep 0.1
	done
	# TCPTW_RELOAD_CYCLES=0 (diagnosis only): the same traffic, no reload
	[ "$RELOAD_CYCLES" = 0 ] && sleep "${TCPTW_RELOAD_IDLE_S:-60}"
	touch "$stop"
	bg_wait "$loop_pid"
	diag "$ok rmmod/insmod cycles in $((SECONDS - t0)) s"
	check_eq "rmmod/insmod cycles" "$ok" "$RELOAD_CYCLES"
	if ! grep -q '^tcptw ' /proc/modules; then
		run_bounded 60 insmod "$TCPTW_KO"
		check_err 1 "module not loaded after the cycles"
	fi

	# Background traffic must be unaffected by the reloads.
	a=0 b=0
	for out in "$TMPDIR_T"/reload.client.*.json; do
		[ -e "$out" ] || continue
		a=$((a + $(json_get "$out" attempts)))
		b=$((b + $(json_get "$out" ok)))
		if [ "$(json_get "$out" failed)" != 0 ]; then
			diag "${out##*/}: $(sed 's/,"per_connect".*/}/' "$out")"
			diag "  failed: $(grep -o '{[^{}]*"err":"[A-Z][^{}]*}' "$out" | tr '\n' ' ')"
		fi
	done
	diag "background traffic: $b of $a connections ok"
	if [ "$b" != "$a" ]; then
		# What dropped the SYNs: listener, conntrack or TIME_WAIT?
		ns_snapshot "$srv" S1 srv_
		ns_snapshot "$nat" S1 nat_
		diag "non-zero srv Tcp*/nat ct deltas: $(for k in "${!S1[@]}"; do
			case $k in srv_mib_Tcp*|nat_ct_*|srv_tw_*) ;; *) continue ;; esac
			d=$((S1[$k] - ${S0[$k]:-0}))
			[ $d -ne 0 ] && printf '%s=%s ' "$k" "$d"
			done)"
		diag "server alive: $(kill -0 "$SERVER_PID" 2>/dev/null && echo yes || echo no); srv sockets:"
		nsx "$srv" ss -tan | head -n 20 | sed 's/^/#   /'
	fi
	check_gt "background connections" "$a" 0
	# Not all of them: one NAT port shared by background and foreground
	# clients, with per-connection TS offsets (6.1.192+), occasionally
	# loses a connection to repeated rejections and conntrack timing
	# (see nat_topo.sh), reloads or not. What the issue requires
	# is that traffic flows across the reloads and the kernel log stays
	# clean; the numbers above are printed for a human.
	check_gt "background connections ok" "$b" 0

	# The reloaded module counts in a namespace that existed before:
	# every PAWS rejection the kernel counts (PAWSEstab on 6.1 also
	# counts a late non-SYN segment rejected by a TIME_WAIT or
	# established socket, seen once beside a slow guest), so all of
	# tcptw's PAWS counters against the MIB.
	k=$(paws_counters "$srv")
	paws=$(mib_paws_tw "$srv")
	out=$TMPDIR_T/reload.final.json
	timeout 60 "$TRAFFIC" client --connect $SRV_ADDR:$SRV_PORT --count 21 \
		--netns "$(nspath "$c1"),$(nspath "$c2")" --barrier --timeout 40 \
		>"$out"
	check_gt "after reload: client ok" "$(json_get "$out" ok)" 0
	k=$(( $(paws_counters "$srv") - k ))
	paws=$(( $(mib_paws_tw "$srv") - paws ))
	check_eq "after reload: srv TwPawsRejected + PawsSynRecvRejected + PawsEstabRejected == PAWS MIB" "$k" "$paws"
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	nat_topo_cleanup
	log_test "$name"
}

# kprobes=1 (x86-64: entries on tcptw's ftrace_ops otherwise): every hook
# that is not a tracepoint goes to the fallback, a kprobe or kretprobe
# (5.10, 6.1) or an fprobe (kernels with fprobes: 6.12, 7.2); a value that
# is no bool is refused and loads nothing
test_kprobes_param()
{
	local name="lifecycle: kprobes=1 hooks without ftrace_ops; kprobes=maybe is refused"
	local kinds n want=kprobe

	test_begin "kprobes param"
	if ! awk -F'\t' '$2 ~ /^ftrace/ { f = 1 } END { exit !f }' \
		"$TCPTW_PROC/probes"; then
		skip_test "no ftrace hooks on this kernel ($(uname -r)): no kprobes parameter"
		log_test "$name"
		return
	fi
	rmmod tcptw
	if timeout 120 insmod "$TCPTW_KO" kprobes=maybe 2>/dev/null; then
		check_err 1 "insmod kprobes=maybe succeeded"
	fi
	n=$(grep -c '^tcptw ' /proc/modules)
	check_eq "modules loaded after kprobes=maybe" "$n" 0
	grep -qw register_fprobe_syms /proc/kallsyms && want=fprobe
	timeout 120 insmod "$TCPTW_KO" kprobes=1 ||
		check_err 1 "insmod kprobes=1 failed"
	kinds=$(awk -F'\t' '$2 != "tracepoint" && $1 !~ /^nf_conntrack:/ { print $2 }' \
		"$TCPTW_PROC/probes" 2>/dev/null | sort -u | tr '\n' ' ')
	diag "hook kinds with kprobes=1: $kinds"
	check_str "hook kinds with kprobes=1" "$kinds" "$want "
	restore_module
	kinds=$(awk -F'\t' '$2 != "tracepoint" && $1 !~ /^nf_conntrack:/ { print $2 }' \
		"$TCPTW_PROC/probes" 2>/dev/null | sort -u | tr '\n' ' ')
	check_str "hook kinds after the reload" "$kinds" "ftrace "
	log_test "$name"
}

test_dmesg()
{
	local bad

	test_begin "dmesg"
	bad=$(dmesg 2>/dev/null | tail -n +$((DMESG_START + 1)) |
		grep -E 'BUG|WARNING|Oops|general protection')
	if [ -n "$bad" ]; then
		echo "$bad" | head -n 20 | sed 's/^/#   /'
		check_err 1 "kernel log has BUG/WARNING/Oops"
	fi
	log_test "lifecycle: kernel log clean (no BUG/WARNING/Oops)"
}

tests_run \
	test_isolation \
	test_new_netns \
	test_reset \
	test_reload \
	test_kprobes_param \
	test_dmesg
