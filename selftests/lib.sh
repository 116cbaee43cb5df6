#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Shared helpers for the tcptw selftests, modelled on the kernel's
# tools/testing/selftests/net/lib.sh. This file: KTAP output and the test
# cases (tests_run, RET/check_err/log_test), namespaces and veth pairs
# (setup_ns, pair_setup, a cleanup trap installed before anything is
# created), waiting, requirements and background processes. It sources
# lib_mib.sh (the module's state and counters, the kernel MIBs that are
# their ground truth, snapshots and deltas) and lib_tools.sh (the
# traffic helper, nginx, conntrack, the CLI's reports).

ksft_pass=0
ksft_fail=1
ksft_xfail=2
ksft_skip=4

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TRAFFIC=${TRAFFIC:-$LIB_DIR/tcptw_traffic}
TCPTW_CLI=${TCPTW_CLI:-$LIB_DIR/../userspace/tcptw}
TCPTW_PROC=/proc/net/tcptw

# Every namespace setup_ns created and every background pid bg_start
# started; cleanup() removes them.
NS_LIST=()
BG_PIDS=()
EXIT_STATUS=0
KTAP_NUM=0
KTAP_PLAN=0
TMPDIR_T=

# Under TCG every exec costs 60-250 ms (more with a second guest on the
# machine): the helpers below read /proc files with one awk inside the
# namespace (nsx) instead of pipelines of ip, cat, nstat and awk.

# nsx NS CMD... : run CMD in the network namespace NS only (nsenter; no
# mount namespace and /sys remount as with `ip netns exec`, so /sys is
# the initial netns's: use it for /proc/net and /proc/sys/net readers).
nsx()
{
	nsenter --net="/run/netns/$1" "${@:2}"
}

# now_ms : milliseconds since the epoch, without an exec.
now_ms()
{
	local t=${EPOCHREALTIME//[^0-9]/}

	echo $((t / 1000))
}

# Scripts may define test_cleanup(); it runs first.
cleanup()
{
	local pid

	if declare -F test_cleanup >/dev/null; then
		test_cleanup
	fi
	for pid in "${BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${BG_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	BG_PIDS=()
	# lib_mib.sh's events_every
	if [ -n "${EVENT_RATE_SAVED:-}" ] && [ -w "$EVENT_RATE" ]; then
		echo "$EVENT_RATE_SAVED" >"$EVENT_RATE"
	fi
	cleanup_all_ns
	[ -n "$TMPDIR_T" ] && rm -rf "$TMPDIR_T"
}
trap cleanup EXIT

TMPDIR_T=$(mktemp -d /tmp/tcptw-selftest.XXXXXX)

# ---------------------------------------------------------------- netns

# setup_ns VAR... : create one namespace per VAR, named VAR-<random>, with
# lo up, and store the name in $VAR.
setup_ns()
{
	local var ns sfx

	for var in "$@"; do
		printf -v sfx '%04x%04x' $RANDOM $RANDOM
		ns="$var-$sfx"
		if ! ip netns add "$ns"; then
			echo "# setup_ns: cannot create $ns" >&2
			return $ksft_skip
		fi
		NS_LIST+=("$ns")
		ip -n "$ns" link set lo up
		eval "$var=\"$ns\""
	done
}

# Kill what still runs in @ns (only our own namespaces) and delete it.
cleanup_ns()
{
	local ns pids i

	for ns in "$@"; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
		for i in "${!NS_LIST[@]}"; do
			[ "${NS_LIST[$i]}" = "$ns" ] && unset 'NS_LIST[i]'
		done
	done
	NS_LIST=("${NS_LIST[@]}")
}

cleanup_all_ns()
{
	[ ${#NS_LIST[@]} -gt 0 ] && cleanup_ns "${NS_LIST[@]}"
	return 0
}

# link_up NS DEV : the device is operationally up.
link_up()
{
	[[ $(ip -n "$1" -o link show dev "$2" 2>/dev/null) == *"state UP"* ]]
}

# veth_pair NS1 NS2 DEV ADDR1 ADDR2 [ADDR1_V6 ADDR2_V6] : a veth with both
# ends named DEV in NS1 and NS2, the addresses (IPv6 ones without DAD)
# set and both ends up, in three execs.
veth_pair()
{
	local a=$1 b=$2 dev=$3

	ip link add "$dev" netns "$a" type veth peer name "$dev" netns "$b" ||
		return 1
	_veth_end "$a" "$dev" "$4" "${6:-}" && _veth_end "$b" "$dev" "$5" "${7:-}"
}

# _veth_end NS DEV ADDR [ADDR_V6] : one end of veth_pair, one ip -batch.
_veth_end()
{
	{
		echo "addr add $3 dev $2"
		[ -n "$4" ] && echo "addr add $4 dev $2 nodad"
		echo "link set $2 up"
	} | ip -n "$1" -b -
}

# pair_setup : the two-namespace topology most scripts use, fresh: $cli
# 198.18.0.1 / fd00::1 and $srv 198.18.0.2 / fd00::2 joined by a veth
# named eth0 at both ends, both up. Fresh namespaces also mean fresh tcptw
# counters, TIME_WAIT sockets and MIBs. A script's own settings follow it
# (pair_setup && nsx "$srv" sysctl ...).
pair_setup()
{
	setup_ns cli srv || return 1
	veth_pair "$cli" "$srv" eth0 198.18.0.1/24 198.18.0.2/24 \
		fd00::1/64 fd00::2/64 || return 1
	busywait 3000 link_up "$cli" eth0 && busywait 3000 link_up "$srv" eth0
}

# ts_pair : pair_setup with TCP timestamps on at both ends, explicit
# (a new netns has them on; the test depends on them)
ts_pair()
{
	pair_setup &&
		nsx "$cli" sysctl -qw net.ipv4.tcp_timestamps=1 &&
		nsx "$srv" sysctl -qw net.ipv4.tcp_timestamps=1
}

nspath()
{
	echo "/run/netns/$1"
}

# ------------------------------------------------------------- waiting

# busywait TIMEOUT_MS CMD... : run CMD until it succeeds or TIMEOUT_MS
# (stretched by TCPTW_TIMEOUT_MULT on slow guests) has passed, 10 ms
# after the first try, then twice as long each time up to 160 ms: a CMD
# that execs (ss, grep, ip) costs a TCG guest 0.1-0.4 s of CPU a try,
# taken from what it waits for.
busywait()
{
	local timeout_ms=$(($1 * ${TCPTW_TIMEOUT_MULT:-1})); shift
	local t=${EPOCHREALTIME//[^0-9]/} end gap=10 sec

	end=$((t / 1000 + timeout_ms))
	while true; do
		"$@" && return 0
		t=${EPOCHREALTIME//[^0-9]/}
		[ $((t / 1000)) -ge "$end" ] && return 1
		printf -v sec '0.%03d' "$gap"
		nap "$sec"
		[ $gap -ge 160 ] || gap=$((gap * 2))
	done
}

# nap SEC : sleep(1) without a fork or an exec (each costs a TCG guest
# tens of ms of CPU that the guest beside it could use): a read that times
# out on a pipe nobody writes to
nap()
{
	[ -n "${NAP_FD:-}" ] || exec {NAP_FD}<> <(:)
	read -r -t "$1" -u "$NAP_FD" _
	return 0
}

# slowwait TIMEOUT_SEC CMD... : the same (also stretched), polling every
# 100 ms.
slowwait()
{
	local timeout_s=$(($1 * ${TCPTW_TIMEOUT_MULT:-1})); shift
	local end=$((SECONDS + timeout_s))

	while true; do
		"$@" && return 0
		[ $SECONDS -ge $end ] && return 1
		nap 0.1
	done
}

# --------------------------------------------------------------- KTAP

# tests_run CASE... : the script's cases, in order, and its end. Each CASE
# is a command (a test function and its arguments, quoted for eval) that
# reports exactly one result (log_test); the plan is the number of cases,
# as forwarding/lib.sh's ALL_TESTS, so it is never counted by hand, and
# ktap_finish fails a case that reported none or two.
tests_run()
{
	local t

	ktap_plan $#
	for t in "$@"; do
		# TCPTW_CASES ("SCRIPT:PATTERN ...", e.g.
		# "tcptw_conntrack.sh:test_table_full"): a script named there
		# runs only the case functions that match one of its patterns,
		# the others skip; for a lane too slow for a whole script (the
		# debug kernels' coverage set). Scripts not named run whole.
		if [ -n "${TCPTW_CASES:-}" ] && ! case_selected "$t"; then
			KTAP_SKIPPED=$((KTAP_SKIPPED + 1))
			ktap_skip "$t" "not in TCPTW_CASES"
			continue
		fi
		eval "$t"
	done
	ktap_finish
}

# case_selected FUNCTION : TCPTW_CASES names this script with a pattern
# FUNCTION matches, or does not name this script at all
case_selected()
{
	local e pats me=${0##*/} named=0

	read -ra pats <<<"$TCPTW_CASES"
	for e in "${pats[@]}"; do
		[ "${e%%:*}" = "$me" ] || continue
		named=1
		# shellcheck disable=SC2053 # a glob, on purpose
		[[ $1 == ${e#*:} ]] && return 0
	done
	[ $named = 0 ]
}

ktap_plan()
{
	KTAP_PLAN=$1
	echo "TAP version 13"
	echo "1..$1"
}

ktap_ok()
{
	KTAP_NUM=$((KTAP_NUM + 1))
	echo "ok $KTAP_NUM $1"
}

ktap_not_ok()
{
	KTAP_NUM=$((KTAP_NUM + 1))
	echo "not ok $KTAP_NUM $1"
	EXIT_STATUS=$ksft_fail
}

ktap_skip()
{
	KTAP_NUM=$((KTAP_NUM + 1))
	echo "ok $KTAP_NUM $1 # SKIP $2"
}

diag()
{
	echo "# $*"
}

# Exit code of a script: 1 if anything failed, 4 if every subtest was
# skipped, else 0.
KTAP_SKIPPED=0
ktap_finish()
{
	if [ "$KTAP_NUM" -ne "$KTAP_PLAN" ]; then
		diag "plan was $KTAP_PLAN tests but $KTAP_NUM ran"
		EXIT_STATUS=$ksft_fail
	fi
	if [ "$EXIT_STATUS" -eq 0 ] && [ "$KTAP_SKIPPED" -eq "$KTAP_NUM" ] &&
	   [ "$KTAP_NUM" -gt 0 ]; then
		exit $ksft_skip
	fi
	exit "$EXIT_STATUS"
}

# ------------------------------------------------- RET / check / log

RET=0
RETMSG=
SKIPMSG=

# check_err ERR MSG : record the first failure of this test.
check_err()
{
	local err=$1 msg=$2

	if [ "$RET" -eq 0 ] && [ "$err" -ne 0 ]; then
		RET=$err
		RETMSG=$msg
	fi
}

check_fail()
{
	local err=$1 msg=$2

	if [ "$RET" -eq 0 ] && [ "$err" -eq 0 ]; then
		RET=1
		RETMSG=$msg
	fi
}

_is_num()
{
	[[ "$1" =~ ^-?[0-9]+$ ]]
}

# check_eq WHAT GOT WANT / check_gt WHAT GOT MIN: print the comparison as a
# KTAP diagnostic line either way, so a log always has the numbers.
check_eq()
{
	local what=$1 got=$2 want=$3

	if _is_num "$got" && _is_num "$want" && [ "$got" -eq "$want" ]; then
		diag "  ok: $what: $got == $want"
	else
		diag "  FAIL: $what: got '$got', want '$want'"
		check_err 1 "$what: got '$got', want '$want'"
	fi
}

check_gt()
{
	local what=$1 got=$2 min=$3

	if _is_num "$got" && [ "$got" -gt "$min" ]; then
		diag "  ok: $what: $got > $min"
	else
		diag "  FAIL: $what: got '$got', want > $min"
		check_err 1 "$what: got '$got', want > $min"
	fi
}

# check_range WHAT GOT LO HI: LO <= GOT <= HI, numbers shown either way
check_range()
{
	local what=$1 got=$2 lo=$3 hi=$4

	if _is_num "$got" && _is_num "$lo" && _is_num "$hi" &&
	   [ "$got" -ge "$lo" ] && [ "$got" -le "$hi" ]; then
		diag "  ok: $what: $lo <= $got <= $hi"
	else
		diag "  FAIL: $what: got '$got', want $lo..$hi"
		check_err 1 "$what: got '$got', want $lo..$hi"
	fi
}

# check_str WHAT GOT WANT : like check_eq, for words
check_str()
{
	if [ "$2" = "$3" ]; then
		diag "  ok: $1: '$2'"
	else
		diag "  FAIL: $1: got '$2', want '$3'"
		check_err 1 "$1: got '$2', want '$3'"
	fi
}

check_lt_float()
{
	local what=$1 got=$2 max=$3

	if awk -v g="$got" -v m="$max" 'BEGIN { exit !(g != "" && g + 0 < m + 0) }'; then
		diag "  ok: $what: $got < $max"
	else
		diag "  FAIL: $what: got '$got', want < $max"
		check_err 1 "$what: got '$got', want < $max"
	fi
}

# Start a test function: RET=0 and a header line.
test_begin()
{
	RET=0
	RETMSG=
	SKIPMSG=
	MOD_SKIPPED=0
	T_BEGIN=$SECONDS
	diag "--- $1"
}

# log_test NAME : one KTAP line for the test that just ran.
log_test()
{
	local name=$1

	diag "$name: $((SECONDS - ${T_BEGIN:-$SECONDS})) s"
	if [ "$RET" -eq "$ksft_skip" ]; then
		KTAP_SKIPPED=$((KTAP_SKIPPED + 1))
		ktap_skip "$name" "$SKIPMSG"
	elif [ "$RET" -ne 0 ]; then
		diag "$name: $RETMSG"
		ktap_not_ok "$name"
	elif [ "$MOD_SKIPPED" = 1 ]; then
		KTAP_SKIPPED=$((KTAP_SKIPPED + 1))
		ktap_skip "$name" "tcptw not loaded, ground truth ok"
	else
		ktap_ok "$name"
	fi
	RET=0
}

# skip_test REASON: mark the current test as skipped.
skip_test()
{
	RET=$ksft_skip
	SKIPMSG=$1
}

# rerun_once CHECK RESET CMD... : run CMD (it drives the traffic of a
# reproduction); then CHECK, in a subshell, says whether the kernel itself
# showed the failure the test is about, and prints why not when it did
# not. A guest starved by its neighbour sometimes does not reproduce it
# (a burst that ran into the next second, a table that never filled):
# that is no miss of the module's, so log it, RESET (clean up and build
# the topology again) and run CMD once more.
# Returns 1 if CMD or RESET failed (a setup failure: the caller reports
# it), else 0, with REPRODUCED=1 if the last run reproduced the failure
# and 0 after two misses. The caller's checks still run after a second
# miss, and fail.
rerun_once()
{
	local check=$1 reset=$2 try why
	shift 2

	REPRODUCED=0
	for try in 1 2; do
		"$@" || return 1
		if why=$("$check"); then
			REPRODUCED=1
			return 0
		fi
		diag "run $try did not reproduce the failure: $why"
		[ $try = 2 ] && break
		diag "once more, in new namespaces"
		$reset || return 1
	done
	return 0
}

# ----------------------------------------------------------- requires

require_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: need root"
		exit $ksft_skip
	fi
}

require_cmd()
{
	local cmd

	for cmd in "$@"; do
		if ! command -v "$cmd" >/dev/null 2>&1; then
			echo "SKIP: $cmd not installed"
			exit $ksft_skip
		fi
	done
}

# have_nat: nftables NAT and conntrack work here (a throwaway netns
# loads a masquerade ruleset); the modules may be missing in a guest.
have_nat()
{
	local ns rc ok

	# once per boot: the first probe loads the modules and takes seconds
	ok=/tmp/tcptw-have-nat.$(</proc/sys/kernel/random/boot_id)
	[ -e "$ok" ] && return 0
	printf -v ns 'nftprobe-%04x%04x' $RANDOM $RANDOM
	ip netns add "$ns" || return 1
	printf '%s\n' "table ip probe {" "chain post {" \
		"type nat hook postrouting priority srcnat; policy accept;" \
		"meta l4proto tcp masquerade to :40000" "}" "}" |
		ip netns exec "$ns" nft -f - >/dev/null 2>&1 &&
		nsx "$ns" conntrack -S >/dev/null 2>&1
	rc=$?
	ip netns del "$ns"
	[ $rc -eq 0 ] && : >"$ok"
	return $rc
}

# require_nat : skip the script (exit 4) without nftables NAT and conntrack
require_nat()
{
	have_nat && return 0
	echo "SKIP: nftables masquerade or conntrack unavailable (see config)"
	exit $ksft_skip
}

# --------------------------------------------------------- processes

# bg_start OUTFILE CMD... : run CMD in the background, stdout to OUTFILE;
# the pid goes to $BG_PID and is killed by cleanup().
bg_start()
{
	local out=$1; shift

	"$@" >"$out" 2>"$out.err" &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# bg_wait PID : wait for a background job started by bg_start.
bg_wait()
{
	local pid=$1 rc i

	wait "$pid"
	rc=$?
	for i in "${!BG_PIDS[@]}"; do
		[ "${BG_PIDS[$i]}" = "$pid" ] && unset 'BG_PIDS[i]'
	done
	BG_PIDS=("${BG_PIDS[@]}")
	return $rc
}

# Avoid the shared nstat history file (nstat -a -s never writes it anyway).
export NSTAT_HISTORY=$TMPDIR_T/nstat.history

# the rest of the vocabulary, by concern
# shellcheck source=selftests/lib_mib.sh
source "$LIB_DIR/lib_mib.sh"
# shellcheck source=selftests/lib_tools.sh
source "$LIB_DIR/lib_tools.sh"
# shellcheck source=selftests/lib_wire.sh
source "$LIB_DIR/lib_wire.sh"
