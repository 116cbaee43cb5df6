#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# The fault lane's sweeps (scripts/fault-lane.sh; docs/testing.md: Lanes).
# Not part of make check: it needs a kernel with fault injection
# (CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC and their debugfs:
# the debug kernels, scripts/debug-kernel.config) and takes minutes there.
#
# Each operation tcptw takes part in runs again and again with the kernel
# failing exactly its Nth allocation (selftests/tcptw_failnth, through
# /proc/thread-self/fail-nth), N = 1, 2, ... until it completes with none
# failed. failslab and fail_page_alloc count every allocation that may
# sleep and every order (ignore-gfp-wait N, min-order 0), quietly
# (verbose 0); __GFP_NOFAIL ones never count. After each failure:
#
#  insmod      the test build (stripped of its debug sections, small
#              tables), two namespaces besides the initial one; only the
#              allocations of tcptw_init() (the test build says which:
#              test_failnth_enter/_exit), not the module loader's:
#              either loaded, then working (counters, probes read) and
#              unloaded, or refused with ENOMEM, then gone for good: not
#              in /proc/modules, no /proc/net/tcptw, nothing of tcptw's in
#              ftrace's enabled functions or the kprobes list.
#  netns       unshare(CLONE_NEWNET) with the test build loaded, only the
#              allocations made inside tcptw_net_init() (the test build
#              says which: test_failnth_enter/_exit): the namespace is
#              made all the same, and tcptw either does not track it
#              (no /proc/net/tcptw there, "not tracked" in the kernel
#              log) or says which part it lacks (status: nomem), or
#              lost an optional part (a table's per-CPU batches).
#  read FILE   open + read of each /proc/net/tcptw file: the whole file
#              or ENOMEM, and the next read is whole again.
#  control     "reset" written: done or ENOMEM, the counters readable.
#  conntrack   nf_conntrack's load with tcptw loaded, which attaches
#              tcptw's conntrack hooks from its module notifier in the
#              loading task: either loaded, with tcptw's conntrack hooks
#              attached or marked as not, or refused with ENOMEM and none
#              of tcptw's hooks left on its functions.
#
# Every failure must also leave no kernel report and nothing of tcptw's
# in kmemleak: selftests/run_vm.sh checks both at the end of the guest.
# Each sweep prints its injection points (the allocations it failed one
# at a time) and how the operation ended for each.

source "$(dirname "$0")/lib.sh"

require_root

FAILNTH=$LIB_DIR/tcptw_failnth
DBGFS=/sys/kernel/debug
PAR=/sys/module/tcptw/parameters
# the bound of one sweep, in injection points
MAX_POINTS=${FAULT_MAX_POINTS:-4000}
# At most this many points of a load or an attach (about 10 s each in a
# debug guest under TCG: tcptw_init() makes about 360 allocations):
# every STRIDEth allocation then, from the first. FAULT_POINTS=0: all.
FAULT_POINTS=${FAULT_POINTS:-40}

# ks COUNT : the allocations a sweep of COUNT fails, then COUNT + 1 (the
# run with none of them failed)
ks()
{
	local stride=1

	[ "$FAULT_POINTS" -gt 0 ] && stride=$(( ($1 + FAULT_POINTS - 1) / FAULT_POINTS ))
	[ "$stride" -ge 1 ] || stride=1
	seq 1 "$stride" "$1"
	echo $(($1 + 1))
}

[ -e /proc/self/fail-nth ] || {
	echo "SKIP: no /proc/self/fail-nth (a kernel without CONFIG_FAULT_INJECTION: the fault lane runs on the debug kernels)"
	exit $ksft_skip
}
[ -x "$FAILNTH" ] || {
	echo "SKIP: $FAILNTH not built (make -C selftests)"
	exit $ksft_skip
}
[ -d $DBGFS/failslab ] || mount -t debugfs none $DBGFS 2>/dev/null
[ -d $DBGFS/failslab ] && [ -d $DBGFS/fail_page_alloc ] || {
	echo "SKIP: no failslab or fail_page_alloc in debugfs (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)"
	exit $ksft_skip
}
have_test_build || {
	echo "SKIP: no test build (TCPTW_TEST_KO unset: scripts/fault-lane.sh builds it)"
	exit $ksft_skip
}

# every allocation counts, and a failure is not logged (the kernel's own
# warnings of a failed allocation still are, where it gives them)
fault_setup()
{
	local d

	for d in failslab fail_page_alloc; do
		echo N >$DBGFS/$d/ignore-gfp-wait
		echo 0 >$DBGFS/$d/verbose
	done
	echo N >$DBGFS/fail_page_alloc/ignore-gfp-highmem
	echo 0 >$DBGFS/fail_page_alloc/min-order
}
fault_setup

TMP=$(mktemp -d /tmp/tcptw-fault.XXXXXX)
KO=$TMP/tcptw.ko
strip --strip-debug -o "$KO" "$TCPTW_TEST_KO"
# the load's sweep with tables and a ring of one kmalloc() each (the
# namespace's sweep has the default sizes: their pages one by one)
KO_PARAMS="event_ring_size=16 peer_table_size=8 listener_table_size=8"

test_cleanup()
{
	[ "${CT_WAS_LOADED:-1}" = 1 ] || rmmod nf_conntrack 2>/dev/null
	rmmod tcptw 2>/dev/null
	insmod "$TCPTW_KO"
	rm -rf "$TMP"
}

# field KEY LINE : the value of KEY=... in tcptw_failnth's line
field()
{
	local kv

	for kv in $2; do
		[ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }
	done
}

# tcptw's hooks left behind: functions in ftrace's filter with tcptw's
# callback, and kprobes of tcptw's
stale_hooks()
{
	{
		grep -h 'tcptw' /sys/kernel/tracing/enabled_functions \
			$DBGFS/tracing/enabled_functions 2>/dev/null
		grep -h 'tcptw' $DBGFS/kprobes/list 2>/dev/null
	} | sort -u | head -n 5
}

# Outcome tallies of one sweep: OUT[kind]=count
declare -A OUT
tally()
{
	OUT[$1]=$(( ${OUT[$1]:-0} + 1 ))
}

tallies()
{
	local k s=

	for k in "${!OUT[@]}"; do
		s="$s $k=${OUT[$k]}"
	done
	echo "${s# }"
}

# The test build's fail-nth marks (kmod/test.h): mark enter|exit
# load|netns|notifier, and marks_clear
mark()
{
	local col

	case $2 in load) col=1 ;; netns) col=2 ;; *) col=3 ;; esac
	cut -d, -f$col $PAR/test_failnth_$1 2>/dev/null || echo -1
}

marks_clear()
{
	echo -1,-1,-1 >$PAR/test_failnth_enter
	echo -1,-1,-1 >$PAR/test_failnth_exit
}

test_insmod()
{
	local name="fault: insmod: each of tcptw_init()'s allocations failed in turn, refused with ENOMEM or loaded and working; nothing left behind"
	local big=1000000 n k line failed err ret stale points=0 untracked0 untracked
	local base count enter exit ns u

	test_begin "insmod"
	OUT=()
	# two namespaces besides the initial one: the load initialises
	# tcptw's part of each, and undoes those made when a later one fails
	setup_ns NSA NSB || { check_err 1 "setup_ns"; log_test "$name"; return; }
	rmmod tcptw || { check_err 1 "rmmod tcptw"; log_test "$name"; return; }
	# where tcptw_init() lies in the count of a load (the loader's own
	# allocations come first: the kernel's, not swept)
	line=$("$FAILNTH" $big insmod "$KO" "$KO_PARAMS")
	enter=$(mark enter load) exit=$(mark exit load)
	rmmod tcptw
	if [ "$(field ret "$line")" != 0 ] || [ "$enter" -le 0 ] ||
	   [ "$exit" -le 0 ]; then
		check_err 1 "no fail-nth marks from tcptw_init(): '$line' $enter $exit"
		insmod "$TCPTW_KO"
		cleanup_ns "$NSA" "$NSB"
		log_test "$name"
		return
	fi
	base=$((big - enter)) count=$((enter - exit))
	diag "insmod: $((base + count)) allocations counted, tcptw_init()'s: $count (from the $((base + 1))th)"
	untracked0=$(dmesg | grep -c 'a new netns is not tracked')
	untracked=$untracked0
	for k in $(ks "$count"); do
		n=$((base + k))
		line=$("$FAILNTH" $n insmod "$KO" "$KO_PARAMS")
		failed=$(field failed "$line") ret=$(field ret "$line")
		err=$(field errno "$line")
		if [ "$ret" = 0 ]; then
			enter=$(mark enter load) exit=$(mark exit load)
			# the loader's count varies by a few: aim again
			if [ "$enter" != "$k" ]; then
				diag "k=$k: aimed at tcptw_init()'s ${k}th, it saw $enter left"
				[ "$enter" -gt 0 ] && base=$((base + k - enter)) ||
					base=$((base + 1))
			fi
			if [ "$exit" != 0 ] && [ "$failed" != 1 ]; then
				rmmod tcptw
				break
			fi
		fi
		points=$((points + 1))
		if [ "$ret" = 0 ]; then
			# degraded, and saying so: a namespace not tracked
			# (the kernel log says it), or a hook not attached
			# (probes gives its error)
			u=0
			for ns in "$NSA" "$NSB"; do
				ip netns exec "$ns" test -d $TCPTW_PROC || u=$((u + 1))
			done
			[ -d $TCPTW_PROC ] || u=$((u + 1))
			if [ $u -gt 0 ]; then
				tally loaded,untracked
				untracked=$((untracked + u))
			elif ! timeout 20 cat $TCPTW_PROC/counters $TCPTW_PROC/status \
				>/dev/null; then
				check_err 1 "k=$k: loaded, but its files cannot be read"
			elif grep -q 'error:' $TCPTW_PROC/probes; then
				tally loaded,hook-error
			elif grep -q nomem $TCPTW_PROC/status; then
				tally loaded,nomem
			else
				tally loaded
			fi
			rmmod tcptw || { check_err 1 "k=$k: rmmod"; break; }
		else
			tally "$err"
			[ "$err" = ENOMEM ] ||
				check_err 1 "k=$k: refused with $err, not ENOMEM"
			grep -q '^tcptw ' /proc/modules &&
				{ check_err 1 "k=$k: refused, yet in /proc/modules"; break; }
			[ -e $TCPTW_PROC ] &&
				check_err 1 "k=$k: refused, yet $TCPTW_PROC is there"
		fi
		stale=$(stale_hooks)
		[ -z "$stale" ] ||
			{ check_err 1 "k=$k: hooks left: $stale"; break; }
	done
	diag "insmod: $points injection points of tcptw_init()'s $count (FAULT_POINTS=$FAULT_POINTS): $(tallies)"
	check_gt "insmod: injection points" "$points" 0
	# (ratelimited: at least one for the first, at most one each)
	check_range "kernel log: 'a new netns is not tracked' for the namespaces loads left untracked" \
		"$(dmesg | grep -c 'a new netns is not tracked')" \
		$((untracked0 + (untracked > untracked0))) "$untracked"
	grep -q '^tcptw ' /proc/modules && rmmod tcptw
	insmod "$TCPTW_TEST_KO" || check_err 1 "insmod without faults after the sweep"
	for ns in "$NSA" "$NSB"; do
		ip netns exec "$ns" cat $TCPTW_PROC/counters >/dev/null ||
			check_err 1 "$ns: no counters after the sweep's last load"
	done
	cleanup_ns "$NSA" "$NSB"
	log_test "$name"
}

# netns_once N : one namespace made with fail-nth N; prints
# "LINE|enter|exit|proc|status" (proc: tracked or untracked; status:
# the parts whose state is not ok, or "ok")
netns_once()
{
	local line

	marks_clear
	line=$("$FAILNTH" "$1" netns sh -c '
		if [ -d /proc/net/tcptw ]; then
			printf "|tracked|"
			awk -F "\t" "NR > 1 && \$2 != \"ok\" { printf \"%s:%s,\", \$1, \$2; n++ } END { if (!n) printf \"ok\" }" /proc/net/tcptw/status
		else
			printf "|untracked|"
		fi' | tr -d '\n')
	# unshare() failed: no CMD ran
	[[ $line == *"|"* ]] || line="$line|none|none"
	echo "${line%%|*}|$(mark enter netns)|$(mark exit netns)|${line#*|}"
}

test_netns()
{
	local name="fault: netns creation: each of tcptw's allocations failed, the namespace made all the same, tcptw untracked there or saying what it lacks"
	local big=1000000 r enter exit base count k n line ret proc status
	local untracked0 untracked points=0 tries

	test_begin "netns"
	OUT=()
	if ! reload_test_build; then
		log_test "$name"
		return
	fi
	# where tcptw's part lies in the count of a namespace's creation
	r=$(netns_once $big)
	enter=$(cut -d'|' -f2 <<<"$r") exit=$(cut -d'|' -f3 <<<"$r")
	if [ "$enter" -le 0 ] || [ "$exit" -le 0 ]; then
		check_err 1 "no fail-nth marks from tcptw_net_init: '$r'"
		log_test "$name"
		return
	fi
	base=$((big - enter)) count=$((enter - exit))
	diag "netns: $((base + count)) allocations counted, tcptw's: $count (from the $((base + 1))th)"
	untracked0=$(dmesg | grep -c 'a new netns is not tracked')
	untracked=$untracked0
	for ((k = 1; k <= count + 1 && k <= MAX_POINTS + 1; k++)); do
		# the count before tcptw's part may vary by a few: aim again
		for tries in 1 2 3 4; do
			n=$((base + k))
			r=$(netns_once $n)
			enter=$(cut -d'|' -f2 <<<"$r")
			[ "$enter" = "$k" ] && break
			[ "$enter" -gt 0 ] 2>/dev/null &&
				base=$((base + k - enter)) || base=$((base + 1))
		done
		line=${r%%|*} exit=$(cut -d'|' -f3 <<<"$r")
		proc=$(cut -d'|' -f4 <<<"$r") status=$(cut -d'|' -f5 <<<"$r")
		ret=$(field ret "$line")
		if [ "$enter" != "$k" ]; then
			check_err 1 "k=$k: cannot aim at tcptw's ${k}th allocation (enter=$enter after 4 tries)"
			break
		fi
		if [ "$exit" != 0 ]; then
			# none of tcptw's failed: the sweep is over
			check_str "netns with none of tcptw's allocations failed: tracked, status" \
				"$proc $status" "tracked ok"
			break
		fi
		points=$k
		[ "$ret" = 0 ] ||
			check_err 1 "k=$k: unshare() failed with tcptw's ${k}th allocation failed: $line"
		if [ "$proc" = untracked ]; then
			tally untracked
			untracked=$((untracked + 1))
		elif [ "$status" = ok ]; then
			tally optional
		else
			tally "${status%,}"
		fi
	done
	diag "netns: $points injection points in tcptw_net_init: $(tallies)"
	check_gt "netns: injection points" "$points" 0
	check_range "kernel log: 'a new netns is not tracked' for the untracked ones (ratelimited)" \
		"$(dmesg | grep -c 'a new netns is not tracked')" \
		$((untracked0 + (untracked > untracked0))) "$untracked"
	r=$(netns_once $big)
	check_str "a namespace made after the sweep: tracked, status" \
		"$(cut -d'|' -f4,5 <<<"$r")" "tracked|ok"
	log_test "$name"
}

# reload_test_build : tcptw as the test build (for its fail-nth marks)
reload_test_build()
{
	rmmod tcptw && insmod "$TCPTW_TEST_KO" && return 0
	check_err 1 "cannot load the test build $TCPTW_TEST_KO"
	return 1
}


test_reads()
{
	local name="fault: /proc/net/tcptw reads: each allocation failed in turn, the whole file or ENOMEM, and the next read whole"
	local f n line failed ret err want points total=0

	test_begin "reads"
	OUT=()
	for f in counters events peers listeners hist probes status; do
		want=$(wc -l <$TCPTW_PROC/$f)
		points=0
		for ((n = 1; n <= MAX_POINTS + 1; n++)); do
			line=$("$FAILNTH" $n read $TCPTW_PROC/$f)
			failed=$(field failed "$line") ret=$(field ret "$line")
			err=$(field errno "$line")
			[ "$failed" = 1 ] || break
			points=$n
			if [ "$ret" = -1 ]; then
				tally "$f:$err"
				[ "$err" = ENOMEM ] ||
					check_err 1 "$f N=$n: $err, not ENOMEM"
			else
				tally "$f:read"
			fi
			[ "$(wc -l <$TCPTW_PROC/$f)" = "$want" ] ||
				check_err 1 "$f N=$n: the next read is not $want lines"
		done
		check_eq "$f: the read with none failed" "$(field ret "$line")" 0
		diag "read $f: $points injection points"
		total=$((total + points))
	done
	diag "reads: $total injection points: $(tallies)"
	check_gt "reads: injection points" "$total" 0
	log_test "$name"
}

test_control()
{
	local name="fault: control reset: each allocation failed in turn, done or ENOMEM, the counters readable"
	local n line failed ret err points=0

	test_begin "control"
	OUT=()
	for ((n = 1; n <= MAX_POINTS + 1; n++)); do
		line=$("$FAILNTH" $n write $TCPTW_PROC/control reset)
		failed=$(field failed "$line") ret=$(field ret "$line")
		err=$(field errno "$line")
		[ "$failed" = 1 ] || break
		points=$n
		if [ "$ret" = -1 ]; then
			tally "$err"
			[ "$err" = ENOMEM ] ||
				check_err 1 "N=$n: $err, not ENOMEM"
		else
			tally "done"
		fi
		timeout 20 cat $TCPTW_PROC/counters >/dev/null ||
			check_err 1 "N=$n: counters unreadable"
	done
	check_eq "reset with none failed" "$(field ret "$line")" 1
	diag "control: $points injection points: $(tallies)"
	check_gt "control: injection points" "$points" 0
	log_test "$name"
}

# ct_hooks : tcptw's conntrack hooks and their state ("name:state ...")
ct_hooks()
{
	awk -F'\t' '$1 ~ /conntrack|early_drop|clash/ { printf "%s:%s ", $1, $3 }' \
		$TCPTW_PROC/probes
}

test_conntrack()
{
	local name="fault: nf_conntrack's load with tcptw loaded: each allocation of tcptw's notifier failed in turn, loaded with tcptw's hooks attached or their error said"
	local big=1000000 ko k n line ret enter exit base count points=0 d

	test_begin "conntrack"
	OUT=()
	CT_WAS_LOADED=0
	if grep -q '^nf_conntrack ' /proc/modules; then
		CT_WAS_LOADED=1
		skip_test "nf_conntrack is in use"
		log_test "$name"
		return
	fi
	ko=$(modinfo -n nf_conntrack 2>/dev/null)
	case $ko in
	*.ko) ;;
	*)	skip_test "nf_conntrack is not a plain .ko here ('$ko')"
		log_test "$name"
		return ;;
	esac
	for d in $(modinfo -F depends nf_conntrack | tr , ' '); do
		modprobe "$d" || { check_err 1 "modprobe $d"; log_test "$name"; return; }
	done
	reload_test_build || { log_test "$name"; return; }
	# where tcptw's notifier lies in the count of nf_conntrack's load
	marks_clear
	line=$("$FAILNTH" $big insmod "$ko")
	enter=$(mark enter notifier) exit=$(mark exit notifier)
	rmmod nf_conntrack
	if [ "$(field ret "$line")" != 0 ] || [ "$enter" -le 0 ] ||
	   [ "$exit" -le 0 ]; then
		check_err 1 "no fail-nth marks from the module notifier: '$line' $enter $exit"
		log_test "$name"
		return
	fi
	base=$((big - enter)) count=$((enter - exit))
	diag "conntrack: $((base + count)) allocations counted, tcptw's notifier's: $count (from the $((base + 1))th)"
	for k in $(ks "$count"); do
		[ "$k" -le "$count" ] || break
		n=$((base + k))
		marks_clear
		line=$("$FAILNTH" $n insmod "$ko")
		ret=$(field ret "$line")
		enter=$(mark enter notifier) exit=$(mark exit notifier)
		points=$((points + 1))
		if [ "$ret" != 0 ]; then
			check_err 1 "k=$k: nf_conntrack refused ($(field errno "$line")): tcptw's notifier cannot fail its load"
			break
		fi
		[ "$enter" = "$k" ] && [ "$exit" = 0 ] ||
			diag "k=$k: aimed at the notifier's ${k}th, it saw $enter then $exit left"
		# each attached, or its error said: never absent
		case $(ct_hooks) in
		*absent*|"")
			check_err 1 "k=$k: tcptw's hooks: '$(ct_hooks)'" ;;
		*error:*) tally "hook-error" ;;
		*)	tally "attached" ;;
		esac
		rmmod nf_conntrack || { check_err 1 "k=$k: rmmod nf_conntrack"; break; }
	done
	diag "conntrack: $points injection points of the notifier's $count (FAULT_POINTS=$FAULT_POINTS): $(tallies)"
	check_gt "conntrack: injection points" "$points" 0
	insmod "$ko" || check_err 1 "nf_conntrack's load without faults"
	case $(ct_hooks) in
	*absent*|*error*|"") check_err 1 "after the sweep, tcptw's hooks: '$(ct_hooks)'" ;;
	esac
	diag "tcptw's conntrack hooks with nf_conntrack loaded: $(ct_hooks)"
	rmmod nf_conntrack 2>/dev/null
	log_test "$name"
}

tests_run \
	test_insmod \
	test_netns \
	test_reads \
	test_control \
	test_conntrack
