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
# failing exactly one of its allocations, the 1st, the 2nd, ... until it
# completes with none failed. Reads and writes: through
# selftests/tcptw_failnth (/proc/thread-self/fail-nth), every allocation
# of the syscalls after the lookup of the file's directory. tcptw_init(),
# a namespace's init and the module notifier: the test build's
# test_failnth_at sets the task's fail-nth at the region's entry and
# clears it at its exit (kmod/test.h), so the count starts there,
# whatever the loader or setup_net() did before.
# failslab and fail_page_alloc count every allocation that may sleep and
# every order (ignore-gfp-wait N, min-order 0), quietly (verbose 0);
# __GFP_NOFAIL ones never count. After each failure:
#
#  insmod      the test build (stripped, small tables), two namespaces
#              besides the initial one, every LOAD_STRIDEth allocation of
#              tcptw_init() and the first few of tcptw_pernet_init() and
#              tcptw_probes_init(): either loaded, then saying what it lacks (a
#              namespace untracked: the kernel log; a part: status; a
#              hook: probes) and unloaded, or refused with ENOMEM, then
#              gone for good: not in /proc/modules, no /proc/net/tcptw,
#              nothing of tcptw's in ftrace's enabled functions or the
#              kprobes list.
#  netns       each allocation of tcptw_net_init(): the namespace is
#              made all the same, and tcptw either does not track it
#              (no /proc/net/tcptw there, "not tracked" in the kernel
#              log) or says which part it lacks (status: nomem), or
#              lost an optional part (a table's per-CPU batches).
#  read FILE   open + read of each /proc/net/tcptw file: the whole file
#              or ENOMEM, and the next read is whole again.
#  control     "reset" written: done or ENOMEM, the counters readable.
#  conntrack   each allocation of tcptw's module notifier as nf_conntrack
#              loads (it attaches tcptw's conntrack hooks): nf_conntrack
#              loaded, each hook attached or its error in probes, none
#              left once nf_conntrack is gone.
#
# Every failure must also leave no kernel report and nothing of tcptw's
# in kmemleak: selftests/run_vm.sh checks both at the end of the guest.
# Each sweep prints its injection points (the allocations it failed one
# at a time), how the operation ended for each, and the sites of the
# failures (the stack of each, traced). Last, every allocator
# call in kmod/ must have failed at least once: each failure's first
# frame in tcptw's code, resolved to its line (addr2line on the test
# build, which scripts/lane.sh builds with -g), against a grep of kmod/.

source "$(dirname "$0")/lib.sh"

require_root

FAILNTH=$LIB_DIR/tcptw_failnth
DBGFS=/sys/kernel/debug
PAR=/sys/module/tcptw/parameters
# the bound of one sweep, in injection points
MAX_POINTS=${FAULT_MAX_POINTS:-4000}
# Every LOAD_STRIDEth allocation of tcptw_init() (about 10 s a load in
# a debug guest under TCG, and about 360 allocations with three
# namespaces; 1: every one); the same for the conntrack notifier past its
# first CT_DENSE
LOAD_STRIDE=${FAULT_LOAD_STRIDE:-15}
CT_DENSE=8

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

# Every allocation counts (the defaults count neither an allocation that
# may sleep nor one of order 0: none of tcptw's), quietly: the kernel log
# would have the stack of a failure only without __GFP_NOWARN, which
# most of tcptw's have. Each failure's stack is traced instead for its
# site (point_sites): kretprobe events on failslab's and fail_page_alloc's
# decisions (should_fail_ex() itself is not traceable), kept where they
# returned a failure, with a stacktrace trigger.
TRACEFS=/sys/kernel/tracing
FAILED_EVS="slab:should_failslab page:should_fail_alloc_page"
fault_setup()
{
	local d

	for d in failslab fail_page_alloc; do
		echo N >$DBGFS/$d/ignore-gfp-wait || return 1
		echo 0 >$DBGFS/$d/verbose || return 1
	done
	echo N >$DBGFS/fail_page_alloc/ignore-gfp-highmem &&
		echo 0 >$DBGFS/fail_page_alloc/min-order || return 1
	[ -d $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS || return 1
	echo 1 >$TRACEFS/options/sym-offset || return 1
	for d in $FAILED_EVS; do
		# an int (0 or -ENOMEM) or a bool: its low byte non-zero is a
		# failure (a bool's upper bits are not defined)
		echo "r:faultsweep/${d%:*} ${d#*:} ret=\$retval:u8" \
			>>$TRACEFS/kprobe_events &&
			echo 'ret != 0' >$TRACEFS/events/faultsweep/${d%:*}/filter &&
			echo 'stacktrace if ret != 0' \
				>$TRACEFS/events/faultsweep/${d%:*}/trigger &&
			echo 1 >$TRACEFS/events/faultsweep/${d%:*}/enable ||
			return 1
	done
}

fault_teardown()
{
	local d ev

	for d in $FAILED_EVS; do
		ev=$TRACEFS/events/faultsweep/${d%:*}
		[ -d "$ev" ] || continue
		echo 0 >"$ev"/enable
		echo '!stacktrace if ret != 0' >"$ev"/trigger
		echo "-:faultsweep/${d%:*}" >>$TRACEFS/kprobe_events
	done
	echo 0 >$TRACEFS/options/sym-offset
	echo >$TRACEFS/trace
}

fault_setup || {
	echo "FAIL: failslab and fail_page_alloc (in $DBGFS) or the trace of their failures (kretprobe events: $FAILED_EVS) cannot be set up"
	fault_teardown
	exit 1
}

TMP=$(mktemp -d /tmp/tcptw-fault.XXXXXX)
KO=$TMP/tcptw.ko
strip --strip-debug -o "$KO" "$TCPTW_TEST_KO"
# the load's sweep with tables and a ring of one kmalloc() each (the
# namespace's sweep has the default sizes: their pages one by one)
KO_PARAMS="event_ring_size=16 peer_table_size=8 listener_table_size=8"

test_cleanup()
{
	fault_teardown
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

# Outcome tallies of one sweep: OUT[kind]=count; the sites of its
# failures: SITES[caller<allocator]=count; and over the whole script,
# each failure's first frame in tcptw's code: TW_FRAMES[fn+0xoff]=count
declare -A OUT SITES TW_FRAMES
tally()
{
	OUT[$1]=$(( ${OUT[$1]:-0} + 1 ))
}

# counts NAME: the associative array NAME as "key=count ..."
counts()
{
	local -n arr=$1
	local k s=

	for k in "${!arr[@]}"; do
		s="$s $k=${arr[$k]}"
	done
	echo "${s# }"
}

tallies()
{
	counts OUT
}

# The functions that stand for an allocator in a stack: the allocators,
# the fault injection's frames, the sanitizers' hooks under them, and the
# trace's own frames above them
ALLOC_FRAMES='^(__kretprobe_trampoline.*|kretprobe_trampoline.*|trampoline_handler|kretprobe_trace_func|kretprobe_dispatcher|kretprobe_rethook_handler|rethook_trampoline_handler|arch_rethook_.*|trace_.*|__trace_.*|event_trigger.*|stacktrace_.*|__?kmem_cache_.*|__?kmalloc.*|dump_stack|dump_stack_lvl|fail_dump|should_fail|should_fail_ex|__should_failslab|should_failslab|should_fail_alloc_page|__should_fail_alloc_page|prepare_alloc_pages|__alloc_pages|alloc_pages|alloc_pages_node|__alloc_pages_node|__get_free_pages|get_zeroed_page|slab_pre_alloc_hook|slab_alloc|slab_alloc_node|__slab_alloc|kmem_cache_alloc|kmem_cache_alloc_node|kmem_cache_alloc_trace|kmem_cache_alloc_lru|kmem_cache_zalloc|__kmalloc|__kmalloc_node|kmalloc_trace|kmalloc_node_trace|__kmalloc_node_track_caller|kmalloc_large|kmalloc_order|kmalloc_order_trace|kvmalloc_node|__kvmalloc_node|kmemdup|kstrdup|kstrdup_const|krealloc|__do_krealloc|__vmalloc_node_range|__vmalloc_node|__vmalloc_area_node|vmalloc|vzalloc|__vmalloc|__alloc_pages_bulk|alloc_pages_bulk_array_mempolicy|vm_area_alloc_pages|alloc_vmap_area|__get_vm_area_node|pcpu_.*|__alloc_percpu.*|kasan_.*|__kasan_.*|kmemleak_.*|__create_object|create_object|.*_noprof)$'

# point_begin: a point of a sweep starts (the trace emptied, the kernel
# log's length in POINT_LOG); point_sites: the site of each failure
# injected since, counted in SITES: "caller<allocator", the first frame
# past ALLOC_FRAMES and the last one of them ("[tcptw]" after a function
# of tcptw's); and its first frame of tcptw's, counted in TW_FRAMES
point_begin()
{
	echo >$TRACEFS/trace
	POINT_LOG=$(dmesg | wc -l)
}

point_sites()
{
	local site frame hex at

	# the test build's text this point, if it said (its sweeps' loads)
	at=$(dmesg | tail -n +$((POINT_LOG + 1)) |
		sed -n 's/.*test build: tcptw_mem_alloc at \([0-9a-f]*\)$/\1/p' | tail -n 1)
	# "site frame hex" a failure: frame is fn+0xoff, "-" without one;
	# hex the frames without a symbol before it, "-" if none
	while read -r site frame hex; do
		SITES[$site]=$(( ${SITES[$site]:-0} + 1 ))
		# a load refused, its symbols gone before the trace was read
		[ "$frame" = - ] && [ "$hex" != - ] && [ -n "$at" ] &&
			frame=$(text_frame "$at" "$hex")
		[ "$frame" = - ] || [ -z "$frame" ] ||
			TW_FRAMES[$frame]=$(( ${TW_FRAMES[$frame]:-0} + 1 ))
	# the trace: "<stack trace>", then a line " => fn+0xoff/0xlen [mod]"
	# a frame (" => 0xADDR" without a symbol)
	done < <(awk -v skip="$ALLOC_FRAMES" '
		function done_one() {
			if (site != "")
				print site, (tw == "" ? "-" : tw), (hex == "" ? "-" : hex)
			inb = 0
		}
		/<stack trace>/ {
			if (inb)
				done_one()
			inb = 1; last = "?"; site = ""; tw = ""; hex = ""
			next
		}
		!inb { next }
		!/^ => / { done_one(); next }
		{
			sub(/^ => /, "")
			if ($1 ~ /^0x[0-9a-f]+$/) {
				hex = hex (hex == "" ? "" : ",") substr($1, 3)
				next
			}
			if ($1 !~ /\+0x/)
				next
			fn = $1
			sub(/\+0x.*/, "", fn)
			sub(/\.(constprop|isra|part|cold).*$/, "", fn)
			if (site == "" && fn ~ skip) {
				last = fn
				next
			}
			if (site == "")
				site = fn "<" last ($2 == "[tcptw]" ? "[tcptw]" : "")
			if ($2 == "[tcptw]") {
				tw = $1
				sub(/\/.*/, "", tw)
				done_one()
			}
		}
		END { if (inb) done_one() }' $TRACEFS/trace)
}

# tcptw_mem_alloc's value in the test build's .text, and that section's
# size: read once, for text_frame
KO_MEM_ALLOC=$(readelf -sW "$TCPTW_TEST_KO" |
	awk '$8 == "tcptw_mem_alloc" && $4 == "FUNC" { print "0x" $2; exit }')
KO_TEXT_SIZE=$(readelf -SW "$TCPTW_TEST_KO" |
	awk '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == ".text" { print "0x" $5; exit }')

# text_frame AT HEX,... : the first of the addresses HEX in the test
# build's .text, as ".text@0xOFFSET" (frame_lines), when its
# tcptw_mem_alloc was at AT; nothing if none is
text_frame()
{
	local h d

	[ -n "$KO_MEM_ALLOC" ] && [ -n "$KO_TEXT_SIZE" ] || return
	for h in ${2//,/ }; do
		# 64-bit arithmetic: the difference of two kernel addresses
		d=$(( 0x$h - 0x$1 + KO_MEM_ALLOC ))
		if [ $d -ge 0 ] && [ $d -lt $((KO_TEXT_SIZE)) ]; then
			printf '.text@0x%x\n' $d
			return
		fi
	done
}

# sites_said WHAT: the sweep's sites, then cleared
sites_said()
{
	local s

	s=$(counts SITES)
	diag "$1: sites (caller<allocator=failures): ${s:-none}"
	SITES=()
}

# hung_dump SECS CMD... : CMD, bounded; past SECS, the kernel's blocked
# tasks and every CPU's backtrace into the log (sysrq w, l) by a watchdog
# of its own (timeout waits for its child: one stuck in the kernel would
# keep it waiting), then CMD killed if it can be
hung_dump()
{
	local secs=$1 rc dog
	shift

	(
		sleep "$secs"
		echo "tcptw fault_sweep: $* still running after $secs s" >/dev/kmsg
		echo w >/proc/sysrq-trigger
		echo l >/proc/sysrq-trigger
	) </dev/null >/dev/null 2>&1 &
	dog=$!
	timeout -k 10 "$secs" "$@"
	rc=$?
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	[ $rc = 124 ] || [ $rc = 137 ] &&
		echo "hung_dump: $* still running after $secs s (the kernel log has its stacks)" >&2
	return $rc
}

# The test build's fail-nth regions (kmod/test.h), in the order of its
# parameters' columns: tcptw_init(), a namespace's init, the module
# notifier, and the load's tcptw_pernet_init() and tcptw_probes_init()
REGIONS="load netns notifier pernet probes"

# at_value REGION K: test_failnth_at's value that fails the Kth
# allocation of REGION, counted from its entry (K 0: none)
at_value()
{
	local r v=

	for r in $REGIONS; do
		[ "$r" = "$1" ] && v=$v,$2 || v=$v,0
	done
	echo "${v#,}"
}

# exit_left REGION: what was left of its K at the region's last exit (0:
# it failed one; -1: no exit since marks_clear)
exit_left()
{
	local r col=0

	for r in $REGIONS; do
		col=$((col + 1))
		[ "$r" = "$1" ] && break
	done
	cut -d, -f$col $PAR/test_failnth_exit 2>/dev/null || echo -1
}

marks_clear()
{
	echo -1,-1,-1,-1,-1 >$PAR/test_failnth_exit
}

# aim_at REGION K
aim_at()
{
	at_value "$1" "$2" >$PAR/test_failnth_at
}

# the errno name insmod's message gives
insmod_errno()
{
	case $1 in
	*"Cannot allocate memory"*) echo ENOMEM ;;
	*) echo "other:${1##*: }" ;;
	esac
}

# load_point REGION K: one load of the sweep with REGION's Kth
# allocation failed, checked; points and untracked counted. 0: a point;
# 1: REGION made fewer than K (none failed); 2: the sweep cannot go on
load_point()
{
	local region=$1 k=$2 out err stale exit ns u

	point_begin
	# shellcheck disable=SC2086 # the parameters, split on purpose
	if out=$(hung_dump 120 insmod "$KO" $KO_PARAMS \
		test_failnth_at="$(at_value "$region" "$k")" 2>&1); then
		exit=$(exit_left "$region")
		if [ "$exit" != 0 ]; then
			# the region made fewer than k
			diag "insmod: $region makes $((k - exit)) allocations"
			rmmod tcptw
			return 1
		fi
		points=$((points + 1))
		# degraded, and saying so: a namespace not tracked (the
		# kernel log says it), a part missing (status) or a hook not
		# attached (probes gives its error)
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
			check_err 1 "$region k=$k: loaded, but its files cannot be read"
		elif grep -q 'error:' $TCPTW_PROC/probes; then
			tally loaded,hook-error
		elif grep -q nomem $TCPTW_PROC/status; then
			tally loaded,nomem
		else
			tally loaded
		fi
		# while its symbols are there
		point_sites
		rmmod tcptw || { check_err 1 "$region k=$k: rmmod"; return 2; }
	else
		points=$((points + 1))
		err=$(insmod_errno "$out")
		tally "$err"
		[ "$err" = ENOMEM ] ||
			check_err 1 "$region k=$k: refused with '$out', not ENOMEM"
		grep -q '^tcptw ' /proc/modules &&
			{ check_err 1 "$region k=$k: refused, yet in /proc/modules"; return 2; }
		[ -e $TCPTW_PROC ] &&
			check_err 1 "$region k=$k: refused, yet $TCPTW_PROC is there"
		point_sites
	fi
	stale=$(stale_hooks)
	[ -z "$stale" ] ||
		{ check_err 1 "$region k=$k: hooks left: $stale"; return 2; }
	return 0
}

test_insmod()
{
	local name="fault: insmod: each of tcptw_init()'s allocations failed in turn, refused with ENOMEM or loaded and saying what it lacks; nothing left behind"
	local k at points=0 untracked0 untracked ns

	test_begin "insmod"
	OUT=()
	# two namespaces besides the initial one: the load initialises
	# tcptw's part of each, and undoes those made when a later one fails
	setup_ns NSA NSB || { check_err 1 "setup_ns"; log_test "$name"; return; }
	rmmod tcptw || { check_err 1 "rmmod tcptw"; log_test "$name"; return; }
	untracked0=$(dmesg | grep -c 'a new netns is not tracked')
	untracked=$untracked0
	# the first allocations of the load's two parts (tcptw's own
	# kcalloc()s and alloc_workqueue()), then every LOAD_STRIDEth of it
	for at in pernet:1 pernet:2 pernet:3 probes:1 probes:2 probes:3 \
		probes:4 probes:5 probes:6; do
		load_point "${at%:*}" "${at#*:}"
		[ $? = 2 ] && break
	done
	for ((k = 1; k <= MAX_POINTS + 1; k += LOAD_STRIDE)); do
		load_point load $k
		case $? in 1|2) break ;; esac
	done
	diag "insmod: $points injection points (every ${LOAD_STRIDE}th allocation of tcptw_init(), the first 3 of tcptw_pernet_init() and 6 of tcptw_probes_init()): $(tallies)"
	sites_said insmod
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

test_netns()
{
	local name="fault: netns creation: each of tcptw's allocations failed, the namespace made all the same, tcptw untracked there or saying what it lacks"
	local k r exit untracked0 untracked points=0

	test_begin "netns"
	OUT=()
	if ! reload_test_build; then
		log_test "$name"
		return
	fi
	untracked0=$(dmesg | grep -c 'a new netns is not tracked')
	untracked=$untracked0
	for ((k = 1; k <= MAX_POINTS + 1; k++)); do
		aim_at netns $k
		marks_clear
		point_begin
		# in the new namespace: tracked or not, and its status's parts
		# that are not ok
		if ! r=$(unshare -n sh -c '
			if [ -d /proc/net/tcptw ]; then
				printf "tracked|"
				awk -F "\t" "NR > 1 && \$2 != \"ok\" { printf \"%s:%s,\", \$1, \$2; n++ } END { if (!n) printf \"ok\" }" /proc/net/tcptw/status
			else
				printf "untracked|"
			fi'); then
			check_err 1 "k=$k: the namespace was not made"
			break
		fi
		exit=$(exit_left netns)
		if [ "$exit" != 0 ]; then
			diag "netns: tcptw_net_init() makes $((k - exit)) allocations"
			check_str "netns with none of tcptw's allocations failed" "$r" "tracked|ok"
			break
		fi
		points=$k
		point_sites
		case $r in
		untracked*) tally untracked; untracked=$((untracked + 1)) ;;
		"tracked|ok") tally optional ;;
		*) r=${r#tracked|}; tally "${r%,}" ;;
		esac
	done
	aim_at load 0
	diag "netns: $points injection points in tcptw_net_init(): $(tallies)"
	sites_said netns
	check_gt "netns: injection points" "$points" 0
	check_range "kernel log: 'a new netns is not tracked' for the untracked ones (ratelimited)" \
		"$(dmesg | grep -c 'a new netns is not tracked')" \
		$((untracked0 + (untracked > untracked0))) "$untracked"
	r=$(unshare -n sh -c 'awk -F "\t" "NR > 1 && \$2 != \"ok\"" /proc/net/tcptw/status')
	check_str "a namespace made after the sweep: parts not ok" "$r" ""
	log_test "$name"
}

# A register_pernet_subsys() that fails after some namespaces were
# initialised runs their exits, which queue their states' frees on
# tcptw's workqueue after an RCU grace period: the load must wait for
# those before it destroys the queue and its text goes (7315c58). Aimed
# exactly: the test build's test_failnth_after_netns fails the first
# allocation after the second namespace's init, the third one's generic
# data in ops_init().
test_register()
{
	local name="fault: insmod with register_pernet_subsys() failing on the third namespace: ENOMEM, the first two's states freed before the module goes, no report"
	local out

	test_begin "register"
	SITES=()
	setup_ns NSA NSB || { check_err 1 "setup_ns"; log_test "$name"; return; }
	rmmod tcptw || { check_err 1 "rmmod tcptw"; log_test "$name"; return; }
	point_begin
	# shellcheck disable=SC2086 # the parameters, split on purpose
	if out=$(hung_dump 120 insmod "$KO" $KO_PARAMS test_failnth_after_netns=2 2>&1); then
		check_err 1 "loaded: the third namespace's allocation did not fail"
		rmmod tcptw
	else
		check_str "insmod's error" "$(insmod_errno "$out")" ENOMEM
	fi
	point_sites
	check_str "the failed allocation's caller" \
		"$(counts SITES | grep -o 'ops_init<' | head -n 1)" 'ops_init<'
	grep -q '^tcptw ' /proc/modules &&
		check_err 1 "refused, yet in /proc/modules"
	# a free still queued would run in the next grace periods, on a
	# destroyed workqueue and the module's text gone
	sleep 3
	check_dmesg_clean "$POINT_LOG"
	SITES=()
	insmod "$TCPTW_TEST_KO" || check_err 1 "insmod without faults after it"
	cleanup_ns "$NSA" "$NSB"
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
			point_begin
			line=$("$FAILNTH" $n read $TCPTW_PROC/$f)
			failed=$(field failed "$line") ret=$(field ret "$line")
			err=$(field errno "$line")
			[ "$failed" = 1 ] || break
			points=$n
			point_sites
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
	sites_said reads
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
		point_begin
		line=$("$FAILNTH" $n write $TCPTW_PROC/control reset)
		failed=$(field failed "$line") ret=$(field ret "$line")
		err=$(field errno "$line")
		[ "$failed" = 1 ] || break
		points=$n
		point_sites
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
	sites_said control
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
	local name="fault: nf_conntrack's load with tcptw loaded: each allocation of tcptw's notifier failed in turn, nf_conntrack loaded, tcptw's hooks attached or their error said"
	local k out exit stale points=0 d

	test_begin "conntrack"
	OUT=()
	CT_WAS_LOADED=0
	if grep -q '^nf_conntrack ' /proc/modules; then
		CT_WAS_LOADED=1
		skip_test "nf_conntrack is in use"
		log_test "$name"
		return
	fi
	for d in $(modinfo -F depends nf_conntrack | tr , ' '); do
		modprobe "$d" || { check_err 1 "modprobe $d"; log_test "$name"; return; }
	done
	reload_test_build || { log_test "$name"; return; }
	# the first CT_DENSE (tcptw's own), then every LOAD_STRIDEth
	for ((k = 1; k <= MAX_POINTS + 1; k += (k < CT_DENSE ? 1 : LOAD_STRIDE))); do
		aim_at notifier $k
		marks_clear
		point_begin
		if ! out=$(modprobe nf_conntrack 2>&1); then
			check_err 1 "k=$k: nf_conntrack refused ($out): tcptw's notifier cannot fail its load"
			break
		fi
		exit=$(exit_left notifier)
		if [ "$exit" != 0 ]; then
			diag "conntrack: the notifier makes $((k - exit)) allocations"
			rmmod nf_conntrack
			break
		fi
		points=$((points + 1))
		point_sites
		# each attached, or its error said: never absent
		case $(ct_hooks) in
		*absent*|"")
			check_err 1 "k=$k: tcptw's hooks: '$(ct_hooks)'" ;;
		*error:*) tally "hook-error" ;;
		*)	tally "attached"; diag "k=$k: all attached" ;;
		esac
		rmmod nf_conntrack || { check_err 1 "k=$k: rmmod nf_conntrack"; break; }
		# nothing of tcptw's left on the functions gone with it
		stale=$(grep -h 'early_drop\|nf_ct_resolve_clash\|nf_conntrack_cleanup' \
			$DBGFS/kprobes/list /sys/kernel/tracing/enabled_functions 2>/dev/null | head -n 3)
		[ -z "$stale" ] || { check_err 1 "k=$k: hooks left: $stale"; break; }
	done
	aim_at load 0
	diag "conntrack: $points injection points in the notifier (the first $CT_DENSE, then every ${LOAD_STRIDE}th): $(tallies)"
	sites_said conntrack
	check_gt "conntrack: injection points" "$points" 0
	modprobe nf_conntrack || check_err 1 "nf_conntrack's load without faults"
	case $(ct_hooks) in
	*absent*|*error*|"") check_err 1 "after the sweep, tcptw's hooks: '$(ct_hooks)'" ;;
	esac
	diag "tcptw's conntrack hooks with nf_conntrack loaded: $(ct_hooks)"
	rmmod nf_conntrack 2>/dev/null
	log_test "$name"
}

# The allocator calls of kmod/ as built into the test build (its copy of
# the sources beside it): "file:line", comments left out
ALLOCATORS='k[mz]alloc|kmalloc_array|kcalloc|kv[mz]alloc|kvmalloc_array|kvcalloc|v[mz]alloc|alloc_pages?|__get_free_pages?|get_zeroed_page|alloc_percpu|alloc_percpu_gfp|kmem_cache_[az]alloc|kstrdup|kmemdup|krealloc|alloc_workqueue'
alloc_sites()
{
	local dir f

	dir=$(dirname "$TCPTW_TEST_KO")
	for f in "$dir"/kmod/*.c "$dir"/kmod/compat/*.c; do
		# only what the module is made of
		[ -e "${f%.c}.o" ] || continue
		grep -nE "(^|[^A-Za-z0-9_])($ALLOCATORS)\(" "$f" |
			grep -vE '^[0-9]+:[[:space:]]*(\*|/\*|//)' |
			sed "s|^\([0-9]*\):.*|${f#"$dir"/}:\1|"
	done
}

# frame_lines FRAME... : the source lines (file:line, the inlined ones
# too) of each fn+0xoff of the test build, one per line
frame_lines()
{
	local ko=$TCPTW_TEST_KO frame fn off sec
	local -A val ndx secname addrs

	# the functions' values and section indexes, the sections' names
	while read -r fn off sec; do
		val[$fn]=$off ndx[$fn]=$sec
	done < <(readelf -sW "$ko" | awk '$4 == "FUNC" { print $8, $2, $7 }')
	while read -r sec fn; do
		secname[$sec]=$fn
	done < <(readelf -SW "$ko" | sed -n 's/^ *\[ *\([0-9]*\)\] \([^ ]*\) .*/\1 \2/p')
	# each frame's return address less one (the call's line), by section
	for frame; do
		if [ "${frame#*@}" != "$frame" ]; then
			# an offset in a section already (text_frame)
			sec=${frame%@*} off=$((${frame#*@} - 1))
		else
			fn=${frame%%+*} off=${frame#*+}
			[ -n "${val[$fn]:-}" ] || continue
			sec=${secname[${ndx[$fn]}]} off=$((0x${val[$fn]} + off - 1))
		fi
		addrs[$sec]="${addrs[$sec]:-} $(printf '0x%x' $off)"
	done
	for sec in "${!addrs[@]}"; do
		# shellcheck disable=SC2086 # the addresses, split on purpose
		addr2line -i -e "$ko" -j "$sec" ${addrs[$sec]}
	done | sed 's| (discriminator [0-9]*)||; s|^.*/\(kmod/\)|\1|'
}

test_sites()
{
	local name="fault: every allocator call in kmod/ made to fail at least once by the sweeps above"
	local site file line lines reached missing='' n=0

	test_begin "sites"
	if ! readelf -SW "$TCPTW_TEST_KO" | grep -q '\.debug_line'; then
		skip_test "the test build has no line numbers (scripts/lane.sh builds it with -g)"
		log_test "$name"
		return
	fi
	lines=$(frame_lines "${!TW_FRAMES[@]}" | sort -u)
	diag "sites: the failures' first frames in tcptw's code: ${#TW_FRAMES[@]}, at lines: $(echo $lines)"
	for site in $(alloc_sites); do
		n=$((n + 1))
		file=${site%:*} line=${site##*:}
		# the call's statement may span three lines
		reached=$(echo "$lines" | awk -F: -v f="$file" -v l="$line" \
			'$1 == f && $2 >= l && $2 <= l + 2 { print; exit }')
		[ -n "$reached" ] || missing="$missing $site"
	done
	check_gt "sites: allocator calls in kmod/" "$n" 0
	check_str "sites: allocator calls of kmod/ no sweep failed" "${missing# }" ""
	log_test "$name"
}

tests_run \
	test_insmod \
	test_register \
	test_netns \
	test_reads \
	test_control \
	test_conntrack \
	test_sites
