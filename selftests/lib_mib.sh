#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Sourced by lib.sh: what the tests count with. The module's state
# (loaded, its hooks, the test build, its bytes), its counters and rows,
# the kernel MIBs and conntrack stats that are their ground truth,
# snapshots and their deltas (B, A, d), and the checks that compare them.

# require_module: skip the script unless the module is loaded. With
# TCPTW_ALLOW_NO_MODULE=1 the script runs anyway, evaluating only the
# kernel ground truth (HAVE_MODULE=0).
HAVE_MODULE=0

# AWK_MIB: awk rules calling out(name, value) for every counter of
# /proc/net/{netstat,snmp} (nstat's names: TcpExtPAWSEstab, TcpOutRsts)
# and of snmp6-style files ("Ip6InReceives 0"); the caller defines out()
# and passes MIB_FILES.
AWK_MIB='
FNR == 1 { hdr = "" }
/^[A-Za-z0-9]+: / {
	p = $1; sub(/:$/, "", p)
	if (hdr != p) { hdr = p; for (i = 2; i <= NF; i++) name[i] = $i; next }
	for (i = 2; i <= NF; i++) out(p name[i], $i)
	hdr = ""; next
}
NF == 2 && $1 ~ /^[A-Za-z]/ { out($1, $2) }'
MIB_FILES=(/proc/net/netstat /proc/net/snmp /proc/net/snmp6)
# AWK_CT: ct_add(LINE) sums the KEY=VALUE fields of a `conntrack -S` line
# (one per CPU) into ct[KEY].
AWK_CT='
function ct_add(l,    n, f, i, kv) {
	n = split(l, f, /[ \t]+/)
	for (i = 1; i <= n; i++)
		if (split(f[i], kv, "=") == 2)
			ct[kv[1]] += kv[2]
}'
# tcptw_bytes_used: bytes of every namespace's rings and tables (status)
tcptw_bytes_used()
{
	awk '$1 == "all_netns" { print $4 }' "$TCPTW_PROC/status"
}
# tcptw_bytes_settled: tcptw_bytes_used once it has not moved for 5 s (at
# most 120 s x TCPTW_TIMEOUT_MULT): a netns deleted by an earlier test is
# freed later, by a kernel worker, and must not be part of a baseline
tcptw_bytes_settled()
{
	local end=$((SECONDS + 120 * ${TCPTW_TIMEOUT_MULT:-1}))
	local last cur same=0

	last=$(tcptw_bytes_used)
	while [ $same -lt 5 ] && [ $SECONDS -lt $end ]; do
		sleep 1
		cur=$(tcptw_bytes_used)
		if [ "$cur" = "$last" ]; then
			same=$((same + 1))
		else
			same=0
			last=$cur
		fi
	done
	echo "$last"
}
# slowwait_for_counter TIMEOUT_SEC MIN CMD... : wait until CMD prints >= MIN.
_counter_ge()
{
	local min=$1; shift
	local v

	v=$("$@")
	[ -n "$v" ] && [ "$v" -ge "$min" ] 2>/dev/null
}
slowwait_for_counter()
{
	local timeout_s=$1 min=$2; shift 2

	slowwait "$timeout_s" _counter_ge "$min" "$@"
}
# hits_settle: test build, wait (up to 30 s) until no hook has been
# called for a second (/sys/module/tcptw/parameters/test_hits): namespaces
# of earlier scripts purge their TIME_WAIT sockets
# (inet_twsk_deschedule_put) when cleanup_net gets to them
hits_settle()
{
	local hits=/sys/module/tcptw/parameters/test_hits i prev now

	prev=$(awk -F'\t' '{ s += $2 } END { print s }' "$hits")
	for i in $(seq 30); do
		sleep 1
		now=$(awk -F'\t' '{ s += $2 } END { print s }' "$hits")
		[ "$now" = "$prev" ] && return 0
		prev=$now
	done
	diag "hooks still being called after 30 s"
}
# Module assertions: without the module (TCPTW_ALLOW_NO_MODULE=1 on a
# development host) they are listed but not evaluated, and log_test
# reports the test as skipped if its ground truth held.
check_mod_eq()
{
	if [ "$HAVE_MODULE" = 1 ]; then
		check_eq "$@"
	else
		diag "  skipped (no module): $1 == ${3}"
		MOD_SKIPPED=1
	fi
}
check_mod_range()
{
	if [ "$HAVE_MODULE" = 1 ]; then
		check_range "$@"
	else
		diag "  skipped (no module): $1 in ${3}..${4}"
		MOD_SKIPPED=1
	fi
}
check_mod_gt()
{
	if [ "$HAVE_MODULE" = 1 ]; then
		check_gt "$@"
	else
		diag "  skipped (no module): $1 > ${3}"
		MOD_SKIPPED=1
	fi
}
# unload_tree MOD: rmmod MOD after everything that holds it
unload_tree()
{
	local m=$1 h

	[ -d "/sys/module/$m" ] || return 0
	for h in /sys/module/"$m"/holders/*; do
		[ -e "$h" ] && { unload_tree "${h##*/}" || return 1; }
	done
	rmmod "$m" 2>/dev/null
}
have_module()
{
	[ -r "$TCPTW_PROC/counters" ]
}
require_module()
{
	if have_module; then
		HAVE_MODULE=1
		return 0
	fi
	if [ "${TCPTW_ALLOW_NO_MODULE:-0}" = 1 ]; then
		diag "tcptw not loaded: TCPTW_ALLOW_NO_MODULE=1, module checks skipped"
		HAVE_MODULE=0
		return 0
	fi
	echo "SKIP: tcptw module not loaded ($TCPTW_PROC/counters missing)"
	exit $ksft_skip
}
# the hooks in nf_conntrack.ko (kmod/ct.c), attached while it is loaded:
# none on a path every flow takes
CT_PROBES="nf_conntrack:early_drop nf_conntrack:nf_ct_resolve_clash
nf_conntrack:nf_conntrack_cleanup_net_list"

# probe_state NAME: the state column of /proc/net/tcptw/probes for NAME
# ("attached", "absent", "error:-N"), empty if the module has no such row.
probe_state()
{
	awk -F'\t' -v n="$1" '$1 == n { print $3 }' "$TCPTW_PROC/probes" \
		2>/dev/null
}
# probe_gate PROBE... : in a test function, before anything is set up:
# false (and the test marked skipped) if the module reports one of the
# hooks the test depends on as "absent" on this kernel.
probe_gate()
{
	local p

	[ "$HAVE_MODULE" = 1 ] || return 0
	for p in "$@"; do
		if [ "$(probe_state "$p")" = absent ]; then
			skip_test "probe $p absent on this kernel"
			return 1
		fi
	done
}
# tw_counter NS NAME : a tcptw counter of @ns; empty (and 1) if the module
# or the counter is missing.
tw_counter()
{
	nsx "$1" awk -v k="$2" '$1 == k { print $2; f = 1 } END { exit !f }' \
		"$TCPTW_PROC/counters" 2>/dev/null
}
# paws_counters NS : tcptw's PAWS rejections of @ns, wherever they
# happened (TIME_WAIT, SYN-RECV, established): what the kernel's
# PAWSEstab (+ PAWSTimewait) counts.
paws_counters()
{
	nsx "$1" awk '$1 == "TwPawsRejected" || $1 == "PawsSynRecvRejected" ||
		$1 == "PawsEstabRejected" { s += $2 } END { print s + 0 }' \
		"$TCPTW_PROC/counters" 2>/dev/null
}
# tw_counters_sum NS : the sum of all tcptw counters of @ns.
tw_counters_sum()
{
	nsx "$1" awk '{ s += $2 } END { print s + 0 }' \
		"$TCPTW_PROC/counters" 2>/dev/null
}
# mib NS NAME : an nstat counter (TcpExtPAWSEstab, TcpOutRsts, ...) of
# @ns, absolute; 0 if this kernel does not have it.
mib()
{
	nsx "$1" awk -v k="$2" 'function out(n, v) { if (n == k) r = v }
		END { print r + 0 }'"$AWK_MIB" "${MIB_FILES[@]}" 2>/dev/null
}
# mib_sum NAME NS... : the same counter summed over several namespaces.
mib_sum()
{
	local name=$1 ns s=0; shift

	for ns in "$@"; do
		s=$((s + $(mib "$ns" "$name")))
	done
	echo $s
}
# mib_paws_tw NS: TIME_WAIT PAWS rejections as the kernel counts them:
# PAWSEstab before ~6.16 (TIME_WAIT and established together), plus
# PAWSTimewait where it exists.
mib_paws_tw()
{
	nsx "$1" awk 'function out(n, v) {
			if (n == "TcpExtPAWSEstab" || n == "TcpExtPAWSTimewait") s += v
		} END { print s + 0 }'"$AWK_MIB" "${MIB_FILES[@]}" 2>/dev/null
}
has_mib()
{
	nsx "$1" awk -v k="$2" 'function out(n, v) { if (n == k) f = 1 }
		END { exit !f }'"$AWK_MIB" "${MIB_FILES[@]}" 2>/dev/null
}
# ct_stat NS FIELD : a `conntrack -S` field (insert_failed, drop, ...)
# summed over CPUs.
ct_stat()
{
	nsx "$1" conntrack -S 2>/dev/null |
		awk -v k="$2" "$AWK_CT"'{ ct_add($0) } END { print ct[k] + 0 }'
}
# tw_sockets NS : TIME_WAIT sockets (any substate) now in @ns.
tw_sockets()
{
	nsx "$1" ss -Htan state time-wait 2>/dev/null | wc -l
}
# tw_mib_at_creation : true if TcpExtTW counts TIME_WAIT sockets as they
# are created (6.1 and later: __inet_twsk_schedule), false if it counts
# them only when their timer expires (5.10: tw_timer_handler), where it
# stays 0 for the first 60 s of a test and never counts a socket that is
# recycled or killed early. Measured, not guessed from the version: one
# loopback connection closed by the client in a scratch namespace, once
# per boot (cached under /tmp by boot id).
tw_mib_at_creation()
{
	local f ns v pid

	f=/tmp/tcptw-tw-mib-at-creation.$(cat /proc/sys/kernel/random/boot_id)
	if [ ! -s "$f" ]; then
		ns=tcptw-twmib-$$
		ip netns add "$ns" || return 0
		ip -n "$ns" link set lo up
		"$TRAFFIC" server --netns "$(nspath "$ns")" --listen 127.0.0.1:9 \
			--count 1 --timeout 10 --close-first client \
			--ready-file "$f.ready" >/dev/null 2>&1 &
		pid=$!
		busywait 5000 test -e "$f.ready"
		timeout 20 "$TRAFFIC" client --connect 127.0.0.1:9 --count 1 \
			--netns "$(nspath "$ns")" --close-first client --barrier \
			--timeout 10 >/dev/null 2>&1
		wait "$pid"
		v=$(mib "$ns" TcpExtTW)
		ip netns del "$ns"
		rm -f "$f.ready"
		[ "$v" = 1 ] && echo creation >"$f" || echo expiry >"$f"
	fi
	[ "$(cat "$f")" = creation ]
}
# tw_created_truth MIB_DELTA OTHER : the ground truth for "TIME_WAIT sockets
# created": the TcpExt TW delta where the kernel counts at creation, else
# OTHER, a count the test knows another way (TIME_WAIT sockets still there
# when none can have gone, or the connections that each leave one).
tw_created_truth()
{
	if tw_mib_at_creation; then
		echo "$1"
	else
		echo "$2"
	fi
}
# check_tw_mib DESC GOT WANT : check_eq on a TcpExt TW delta where it counts
# creations; elsewhere say why it is not checked (never a silent pass).
check_tw_mib()
{
	if tw_mib_at_creation; then
		check_eq "$@"
	else
		diag "not checked on $(uname -r): $1 (TcpExt TW counts at expiry here)"
	fi
}
# B and A: the snapshots before and after a case's traffic (ns_snapshot
# NS B PREFIX, then ... A PREFIX); d KEY is KEY's delta, 0 if absent.
declare -A B A
d()
{
	echo $(( ${A[$1]:-0} - ${B[$1]:-0} ))
}
# ns_snapshot NS ARRAY PREFIX : one nsenter + awk (execs are slow under
# TCG) filling ARRAY[PREFIX<name>] with every tcptw counter (as tw_<name>),
# every nstat counter (mib_<name>, absolute) and the conntrack stats
# summed over CPUs (ct_<field>). awk writes "[key]=value" words and one
# eval takes them all: a read loop costs a read(2) per byte of ~400
# lines under TCG.
ns_snapshot()
{
	local ns=$1 words
	local -n arr=$2

	words=$(nsx "$ns" awk -v tcptw="$TCPTW_PROC/counters" -v pre="$3" '
		function emit(k, v) {
			if (k ~ /^[A-Za-z0-9_]+$/ && v ~ /^-?[0-9]+$/)
				printf "[%s%s]=%s\n", pre, k, v
		}
		function out(n, v) { emit("mib_" n, v) }
		BEGIN {
			while ((getline l < tcptw) > 0) {
				split(l, f, " ")
				emit("tw_" f[1], f[2])
			}
		}
		END {
			cmd = "conntrack -S 2>/dev/null"
			while ((cmd | getline l) > 0)
				ct_add(l)
			close(cmd)
			for (k in ct)
				emit("ct_" k, ct[k])
		}'"$AWK_MIB$AWK_CT" "${MIB_FILES[@]}" 2>/dev/null)
	eval "arr+=($words)"
}
# listener_row NS ADDR PORT : the listeners row of ADDR PORT, or nothing.
listener_row()
{
	nsx "$1" cat "$TCPTW_PROC/listeners" 2>/dev/null |
		awk -v a="$2" -v p="$3" '$1 == a && $2 == p'
}

# events_count NS EVENT [PATTERN] : lines of @ns's events with @EVENT (and
# grep -F PATTERN).
events_count()
{
	nsx "$1" awk -v e="$2" -v p="${3:- }" '$2 == e && index($0, p) { n++ }
		END { print n + 0 }' "$TCPTW_PROC/events" 2>/dev/null
}
# idle_rsts NS : RSTs received in NS after 4096 ms or more of silence: the
# buckets of the hist row rst_received_idle whose lower bound (half their
# le_ms bound) is 4096 or more; tcptw diagnose's DIAG_IDLE_RST_MS.
idle_rsts()
{
	nsx "$1" awk '
		NR == 1 { for (i = 2; i <= NF; i++) le[i] = $i; next }
		$1 == "rst_received_idle" {
			for (i = 2; i <= NF; i++)
				if (le[i] == "+Inf" || le[i] / 2 >= 4096) n += $i
			f = 1
		}
		END { print f ? n + 0 : "none" }' "$TCPTW_PROC/hist" 2>/dev/null
}
# Kernel release helpers.
kernel_is_61()
{
	case "$(uname -r)" in
	6.1.*|6.1-*) return 0 ;;
	esac
	return 1
}
# require_seeds_at_load KERNEL...: the seeds at their own numbers
# (tcptw_seed_*.sh) run in make check on the kernels named (major.minor:
# the ones issue 18 asks for, which CI's 90 minutes leave room for), and
# on every kernel with TCPTW_SEEDS_AT_LOAD=1 (make seeds). Where a hook
# fell back to kprobes (the probes file says kprobe or kretprobe), a
# kprobe that fires while another kprobe's handler runs on the same CPU
# is skipped, which at the seeds' load happens (a few per hook per run on
# 5.10 and 6.1 before their ftrace hooks): the seed is skipped there in
# make check, saying so.
require_seeds_at_load()
{
	local kv k

	[ "${TCPTW_SEEDS_AT_LOAD:-0}" = 1 ] && return 0
	if awk -F'\t' '$2 ~ /^kretprobe$|^kprobe$/ && $1 !~ /^nf_conntrack:/ { k = 1 } END { exit !k }' \
		"$TCPTW_PROC/probes" 2>/dev/null; then
		echo "SKIP: hooks on kprobes here, which miss calls nested under a task-context kprobe at the seed's load (make seeds runs it: TCPTW_SEEDS_AT_LOAD=1)"
		exit $ksft_skip
	fi
	kv=$(uname -r | cut -d. -f1-2)
	for k in "$@"; do
		[ "$k" = "$kv" ] && return 0
	done
	echo "SKIP: in make check on ${*:-no kernel} only, for CI's time budget (make seeds runs it here: TCPTW_SEEDS_AT_LOAD=1)"
	exit $ksft_skip
}
# have_test_build: true if the test build (kmod/test.h knobs) and the
# normal one are both at hand; scripts/check.sh builds the first beside
# the second, and run_vm.sh sets TCPTW_TEST_KO
have_test_build()
{
	[ -n "${TCPTW_TEST_KO:-}" ] && [ -r "$TCPTW_TEST_KO" ] &&
		[ -n "${TCPTW_KO:-}" ]
}
# events_every: this script counts every event, where the module records
# event_rate of them per second, CPU and type (100 by default): the rate is
# 0 (all) until the script ends (lib.sh's cleanup puts it back) and after
# each restore_module
EVENT_RATE=/sys/module/tcptw/parameters/event_rate
events_every()
{
	EVENTS_EVERY=1
	event_rate_set 0 2>/dev/null || true
}
# event_rate_set N: the module's event_rate is N until the script ends
# (or event_rate_set again); false if the module has no writable one
event_rate_set()
{
	[ -w "$EVENT_RATE" ] || return 1
	[ -n "${EVENT_RATE_SAVED:-}" ] || EVENT_RATE_SAVED=$(cat "$EVENT_RATE")
	echo "$1" >"$EVENT_RATE"
}
# restore_module: back to the normal build ($TCPTW_KO), default parameters
# (but events_every's)
restore_module()
{
	grep -q '^tcptw ' /proc/modules && rmmod tcptw
	timeout 120 insmod "$TCPTW_KO" || return
	[ -z "${EVENTS_EVERY:-}" ] || events_every
}
# check_dmesg_clean START: no BUG/WARNING/Oops/GPF line in the kernel log
# after its first START lines (a check), and the first reports shown. In
# the KCSAN lane (TCPTW_KCSAN=1) KCSAN's reports are left to run_vm.sh,
# which fails on those in tcptw and lists the kernel's own.
check_dmesg_clean()
{
	local got

	got=$(_dmesg_since "$1" | grep -cE 'BUG|WARNING|Oops|general protection')
	check_eq "kernel log lines with BUG/WARNING/Oops" "$got" 0
	[ "$got" = 0 ] || _dmesg_since "$1" |
		grep -E -A8 'BUG|WARNING|Oops' | head -n 30 | sed 's/^/#   /'
}

_dmesg_since()
{
	if [ "${TCPTW_KCSAN:-0}" = 1 ]; then
		dmesg | tail -n +$(($1 + 1)) | awk '
			/BUG: KCSAN:/ { skip = 1 }
			!skip { print }
			skip && /====================/ { skip = 0 }'
	else
		dmesg | tail -n +$(($1 + 1))
	fi
}
