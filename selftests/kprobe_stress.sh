#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# Not a tcptw test (run_tests.sh never picks it up): a reproducer for the
# kernel, run by scripts/kprobe-stress.sh. It drives the reload test's
# NAT+PAWS traffic and, instead of rmmod/insmod tcptw, adds, enables,
# disables and removes tracefs kprobe events on the functions tcptw hooks,
# with tcptw unloaded. So whatever happens here happens to every kprobe
# user (perf probe, bpftrace, BCC), not only to tcptw. Each cycle makes
# the kernel patch its own text (ftrace sites, and the jump labels of the
# tracepoints tracing turns on) while the other vCPU runs it.
#
#   cli1 --+
#          +-- nat (masquerade) --- srv:8080   21 connections per round,
#   cli2 --+                                   rounds until the cycles end
#
#   each cycle: kretprobe events (r) and/or kprobe events (p) on
#   tcptw's 17 hook sites, on for KPROBE_STRESS_ON_S, then off and removed
#
# KPROBE_STRESS_CYCLES (100), KPROBE_STRESS_MODE (rp: r = kretprobes,
# p = kprobes), KPROBE_STRESS_ON_S (0.5). Passes if every cycle ran and
# the kernel logged no BUG/WARNING/Oops (a panic ends the guest instead).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_topo.sh"

require_root
require_traffic

CYCLES=${KPROBE_STRESS_CYCLES:-100}
MODE=${KPROBE_STRESS_MODE:-rp}
ON_S=${KPROBE_STRESS_ON_S:-0.5}
T=/sys/kernel/tracing
# the functions tcptw hooks with a kretprobe, then those with a kprobe
RET_SITES="inet_twsk_alloc tcp_timewait_state_process tcp_twsk_unique
__inet_hash_connect tcp_conn_request tcp_check_req tcp_v4_syn_recv_sock
tcp_v6_syn_recv_sock tcp_rcv_state_process tcp_v4_send_reset
tcp_v6_send_reset nf_conntrack:nf_ct_resolve_clash nf_conntrack:early_drop"
ENTRY_SITES="inet_twsk_deschedule_put tcp_oow_rate_limited
tcp_send_active_reset nf_conntrack:nf_conntrack_cleanup_net_list"

case $MODE in
r | p | rp | pr) ;;
*) echo "kprobe_stress.sh: KPROBE_STRESS_MODE must be r, p or rp" >&2; exit 2 ;;
esac
[[ $CYCLES =~ ^[1-9][0-9]*$ ]] ||
	{ echo "kprobe_stress.sh: KPROBE_STRESS_CYCLES must be a positive number" >&2; exit 2; }

test_kprobe_stress()
{
	test_begin "kprobe stress"
	if grep -q '^tcptw ' /proc/modules; then
		rmmod tcptw || { check_err 1 "cannot rmmod tcptw"; log_test "kprobe stress"; return; }
	fi
	[ -e $T/kprobe_events ] || mount -t tracefs nodev $T 2>/dev/null
	if [ ! -w $T/kprobe_events ]; then
		skip_test "no tracefs kprobe_events on $(uname -r)"
		log_test "kprobe stress"
		return
	fi
	dmesg_start=$(dmesg | wc -l)
	nat_topo_setup || { check_err 1 "topology setup failed"; log_test "kprobe stress"; return; }
	server_start "$srv" "$TMPDIR_T/server.json" \
		--listen $SRV_ADDR:$SRV_PORT --count 0 --timeout $((CYCLES * 4 + 120)) ||
		check_err 1 "server did not start"

	stop=$TMPDIR_T/stop
	(
		for i in $(seq 1000); do
			[ -e "$stop" ] && break
			timeout 30 "$TRAFFIC" client --connect $SRV_ADDR:$SRV_PORT \
				--count 21 --netns "$(nspath "$c1"),$(nspath "$c2")" \
				--barrier --timeout 20 >"$TMPDIR_T/client.$i.json"
		done
	) &
	loop_pid=$!
	BG_PIDS+=("$loop_pid")

	# one event per line; a site this kernel cannot probe is named once
	events=()
	n=0
	if [[ $MODE == *r* ]]; then
		for f in $RET_SITES; do
			n=$((n + 1))
			events+=("r:tcptw_stress/r$n $f \$retval")
		done
	fi
	if [[ $MODE == *p* ]]; then
		for f in $RET_SITES $ENTRY_SITES; do
			n=$((n + 1))
			events+=("p:tcptw_stress/p$n $f")
		done
	fi
	declare -A refused=()

	ok=0 t0=$SECONDS
	for i in $(seq "$CYCLES"); do
		added=0
		for e in "${events[@]}"; do
			[ -n "${refused[$e]:-}" ] && continue
			if echo "$e" 2>/dev/null >>$T/kprobe_events; then
				added=$((added + 1))
			else
				refused[$e]=1
				diag "refused by $(uname -r): $e"
			fi
		done
		[ "$added" -gt 0 ] || { diag "cycle $i: no event could be added"; break; }
		echo 1 >$T/events/tcptw_stress/enable || break
		sleep "$ON_S"
		echo 0 >$T/events/tcptw_stress/enable || break
		# removes every kprobe event (none of them are ours to keep)
		echo >$T/kprobe_events || break
		ok=$((ok + 1))
		sleep 0.1
	done
	touch "$stop"
	bg_wait "$loop_pid"
	conns=0
	for out in "$TMPDIR_T"/client.*.json; do
		[ -e "$out" ] && conns=$((conns + $(json_get "$out" ok)))
	done
	diag "$ok cycles ($MODE, $ON_S s on) in $((SECONDS - t0)) s under $conns connections"
	check_eq "cycles" "$ok" "$CYCLES"
	check_gt "connections during the cycles" "$conns" 0
	bad=$(dmesg | tail -n +$((dmesg_start + 1)) | grep -E 'BUG|WARNING|Oops|general protection')
	[ -z "$bad" ] || { echo "$bad" | head -n 20 | sed 's/^/#   /'; check_err 1 "kernel log has BUG/WARNING/Oops"; }
	log_test "kprobe stress: $CYCLES cycles of kprobe events under NAT+PAWS traffic"
}

tests_run test_kprobe_stress
