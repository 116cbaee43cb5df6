#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# run_vm.sh KO_PATH [TEST...] : what runs inside the QEMU guest
# (scripts/vng-run.sh): insmod the module, run the whole selftest suite, or
# only the tcptw_*.sh scripts named (KTAP), rmmod, and fail
# if the kernel logged a BUG/WARNING/Oops meanwhile (on a debug kernel also
# any KASAN or lockdep report, lockdep switched off, or a kmemleak report
# that points into tcptw after the last rmmod). Every step is bounded
# with timeout(1). Exit status: 0 only if everything passed.
#
# TCPTW_COVERAGE=1: load the test build (beside KO_PATH, see below) in
# its place, sum each hook's calls over the run (test_hits, sampled every
# second and across the scripts' reloads) and fail unless every hook the
# probes file lists as attached fired at least once.

ko=${1:?usage: run_vm.sh KO_PATH [TEST...]}
shift
tests=("$@")
here=$(cd "$(dirname "$0")" && pwd)
rc=0

ko=$(cd "$(dirname "$ko")" && pwd)/$(basename "$ko")
# the test build (TCPTW_TEST=1) that scripts/check.sh puts beside it
if [ -z "${TCPTW_TEST_KO:-}" ] && [ -r "$(dirname "$ko")-test/tcptw.ko" ]; then
	TCPTW_TEST_KO=$(dirname "$ko")-test/tcptw.ko
	export TCPTW_TEST_KO
fi
if [ "${TCPTW_COVERAGE:-0}" = 1 ]; then
	[ -n "${TCPTW_TEST_KO:-}" ] || {
		echo "not ok 1 selftests: tcptw: coverage needs the test build beside $ko"
		exit 1
	}
	ko=$TCPTW_TEST_KO
fi
# udevd, which virtme-ng's init starts for the coldplug, has a worker run
# its rules for every veth and namespace device the tests create (7-8 s
# of CPU per script in a TCG guest, measured with process accounting) and
# may rewrite a veth's MAC address under a test. No test needs it: the
# device nodes are devtmpfs', modules load on request.
udevadm control --exit 2>/dev/null
dmesg_start=$(dmesg | wc -l)
echo "# run_vm: kernel $(uname -r), module $ko"
echo "# run_vm: command line: $(cat /proc/cmdline)"

# A kernel that reported a problem before anything was loaded (the debug
# kernels under TCG, now and then: a KASAN wild-memory-access in early
# boot, which also switches lockdep off and would hide ours) proves
# nothing either way: exit 75 and scripts/vng-run.sh boots again.
# Debug kernels (scripts/debug-kernel.sh): lockdep reports once, then
# switches itself off.
lockdep_on() { grep -qE '^ *debug_locks: *1$' /proc/lockdep_stats 2>/dev/null; }
# the first lines of the kernel's reports; the end of the run also fails
# on a bare BUG/WARNING, a Call Trace or a lock held returning to user
# space (REPORT_RE_RUN)
REPORT_RE='BUG:|WARNING:|Oops|general protection|KASAN:|UBSAN:|possible circular locking|possible recursive locking|suspicious RCU usage|inconsistent lock state|sleeping function called from invalid context'
REPORT_RE_RUN="BUG|WARNING|Call Trace|lock held when returning to user space|$REPORT_RE"
lockdep=0
# KCSAN's reports (the KCSAN lane, TCPTW_KCSAN=1) are sorted at the end:
# the kernel's own races, from the boot on, are not the lane's
no_kcsan()
{
	if [ "${TCPTW_KCSAN:-0}" = 1 ]; then
		awk '/BUG: KCSAN:/ { skip = 1 } !skip { print } skip && /====================/ { skip = 0 }'
	else
		cat
	fi
}
pre=$(dmesg | no_kcsan | grep -m 1 -E "$REPORT_RE")
if [ -r /proc/lockdep_stats ] && ! lockdep_on; then
	pre=${pre:-lockdep is off}
fi
if [ -n "$pre" ]; then
	echo "# run_vm: reboot: $pre"
	dmesg | grep -E -A 30 "$REPORT_RE" | head -n 60 | sed 's/^/# /'
	exit 75
fi
[ -r /proc/lockdep_stats ] && lockdep=1
# kmemleak: forget what the boot left behind; scanned after the last rmmod
kmemleak=/sys/kernel/debug/kmemleak
[ -e /sys/kernel/debug/kmemleak ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w $kmemleak ]; then
	echo clear >$kmemleak || kmemleak=
else
	kmemleak=
fi

timeout 60 make -s -C "$here" all || { echo "not ok 1 selftests: tcptw: build"; exit 1; }

if ! timeout 60 insmod "$ko"; then
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 selftests: tcptw: insmod $ko"
	dmesg | tail -n +$((dmesg_start + 1)) | sed 's/^/# /'
	exit 1
fi
echo "# /proc/net/tcptw/probes:"
timeout 10 cat /proc/net/tcptw/probes | sed 's/^/#   /'

# coverage_sampler FILE: every second, each hook's calls since the load
# (test_hits) into FILE as "hook total" lines, adding a load's last count
# when the next load starts again from below it
coverage_sampler()
{
	local hits=/sys/module/tcptw/parameters/test_hits
	declare -A last total
	local name n

	while :; do
		if [ -r $hits ]; then
			while IFS=$'\t' read -r name n; do
				[ -n "$name" ] || continue
				if [ "$n" -lt "${last[$name]:-0}" ]; then
					total[$name]=$(( ${total[$name]:-0} + ${last[$name]} ))
				fi
				last[$name]=$n
			done < <(timeout 5 cat $hits 2>/dev/null)
			for name in "${!last[@]}"; do
				echo "$name $(( ${total[$name]:-0} + ${last[$name]} ))"
			done >"$1.tmp" && mv "$1.tmp" "$1"
		fi
		sleep 1
	done
}
if [ "${TCPTW_COVERAGE:-0}" = 1 ]; then
	coverage=$(mktemp)
	attached=$(awk -F'\t' '$3 == "attached" { print $1 }' /proc/net/tcptw/probes)
	coverage_sampler "$coverage" &
	sampler=$!
fi

# the whole suite, bounded: an hour per unit of the kernel's slowness
bound=$((3600 * ${TCPTW_TIMEOUT_MULT:-1}))
if [ ${#tests[@]} -gt 0 ]; then
	(cd "$here" && TCPTW_KO=$ko timeout $bound ./run_tests.sh "${tests[@]}") || rc=1
else
	TCPTW_KO=$ko timeout $bound make -s -C "$here" run || rc=1
fi

if [ -n "${sampler:-}" ]; then
	sleep 2
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	echo "# hook calls over the run (coverage):"
	sort "$coverage" | sed 's/^/#   /'
	# and those attached since (a module's, once it was loaded)
	attached=$({ echo "$attached"
		awk -F'\t' '$3 == "attached" { print $1 }' /proc/net/tcptw/probes 2>/dev/null
	} | sort -u)
	never=
	for h in $attached; do
		n=$(awk -v h="$h" '$1 == h { print $2 }' "$coverage")
		[ "${n:-0}" -gt 0 ] || never="$never $h"
	done
	if [ -n "$never" ]; then
		echo "not ok - selftests: tcptw: coverage: hooks that never fired:$never"
		rc=1
	else
		echo "ok - selftests: tcptw: coverage: every attached hook fired ($(echo $attached | wc -w))"
	fi
	rm -f "$coverage"
fi

# A hook that skipped a call (the fourth column, since the last load): a
# kretprobe with no free instance (maxactive is sized so that it never
# should), a kprobe nested in another kprobe's handler on the same CPU
# (docs/design.md: Limits), an fprobe recursing in one context.
if [ -r /proc/net/tcptw/probes ]; then
	missed=$(timeout 10 awk -F'\t' '$4 > 0 { printf " %s=%s", $1, $4 }' \
		/proc/net/tcptw/probes)
	if [ -n "$missed" ]; then
		echo "not ok - selftests: tcptw: no hook call missed:$missed"
		rc=1
	else
		echo "# hook calls missed during the suite: 0"
	fi
fi

if grep -q '^tcptw ' /proc/modules; then
	timeout 60 rmmod tcptw || { echo "# rmmod tcptw failed"; rc=1; }
fi

# Every unreferenced object whose allocation backtrace has a frame in
# tcptw: "[tcptw]" while it is loaded; after its rmmod the frame has no
# symbol any more and prints as a bare address (any module the tests
# unloaded, nf_conntrack too: reported as well, and labelled so).
if [ -n "$kmemleak" ]; then
	# two scans: an object must be found unreferenced after a grace
	# period (kmemleak's minimum age is 5 s)
	sleep 5
	timeout 600 sh -c "echo scan >$kmemleak" && sleep 6 &&
		timeout 600 sh -c "echo scan >$kmemleak"
	leaks=$(timeout 60 cat $kmemleak | awk '
		/^unreferenced object/ { if (hit) print obj; obj = ""; hit = 0 }
		{ obj = obj $0 "\n" }
		/\[tcptw\]/ { hit = 1 }
		/^ *\[<[0-9a-f]+>\] 0x[0-9a-f]+$/ { hit = 1 }
		END { if (hit) print obj }')
	if [ -n "$leaks" ]; then
		echo "not ok - selftests: tcptw: kmemleak: nothing allocated by tcptw (or another unloaded module) leaked"
		printf '%b' "$leaks" | head -n 120 | sed 's/^/# /'
		rc=1
	else
		echo "ok - selftests: tcptw: kmemleak: nothing allocated by tcptw leaked ($(timeout 60 grep -c '^unreferenced object' $kmemleak) other unreferenced objects)"
	fi
fi

# The kernel log since the start. With TCPTW_FAULTS=1 (the fault lane,
# scripts/fault-lane.sh), without the stacks of the allocations the lane
# made fail on purpose: the fault injection's ("FAULT_INJECTION: forcing
# a failure", its stack up to "</TASK>") and the kernel's own warnings
# (warn_alloc(): "page allocation failure" or "vmalloc error", then a
# stack dump up to its "</TASK>", then the memory summary, whose lines
# name no report).
# Without KCSAN's reports (no_kcsan), which kcsan_reports sorts.
run_log()
{
	dmesg | tail -n +$((dmesg_start + 1)) |
	if [ "${TCPTW_FAULTS:-0}" = 1 ]; then
		awk '
			/FAULT_INJECTION: forcing a failure|page allocation failure|vmalloc error|: vmalloc: allocation failure/ { skip = 1 }
			!skip { print }
			skip && /<\/TASK>/ { skip = 0 }'
	else
		cat
	fi | no_kcsan
}

# kcsan_reports ours|theirs : the first line of each KCSAN report since
# the start with a frame in tcptw ("[tcptw]") or without one
kcsan_reports()
{
	dmesg | tail -n +$((dmesg_start + 1)) | awk -v want="$1" '
		/BUG: KCSAN:/ { inb = 1; first = $0; ours = 0; next }
		inb && /\[tcptw\]/ { ours = 1 }
		inb && /====================/ {
			inb = 0
			if ((want == "ours") == ours)
				print first
		}'
}

# the reports' first lines (lockdep's and KASAN's say BUG: or WARNING:
# too; listed for whoever greps for them)
bad=$(run_log | grep -E "$REPORT_RE_RUN")
if [ -n "$bad" ]; then
	echo "not ok - selftests: tcptw: kernel log clean"
	echo "$bad" | head -n 40 | sed 's/^/# /'
	# the first report whole (80 lines): the stack, lockdep's locks held
	run_log |
		grep -E -m 1 -A 80 'BUG|WARNING|Oops|general protection' |
		sed 's/^/# | /'
	rc=1
else
	echo "# kernel log since the start: no BUG/WARNING/Oops/KASAN/lockdep report"
fi
if [ "${TCPTW_KCSAN:-0}" = 1 ]; then
	theirs=$(kcsan_reports theirs | sort | uniq -c | sort -rn)
	ours=$(kcsan_reports ours | sort | uniq -c | sort -rn)
	if [ -n "$theirs" ]; then
		echo "# KCSAN: races with no frame of tcptw's (the kernel's own, not this lane's):"
		echo "$theirs" | head -n 20 | sed 's/^/#   /'
	fi
	if [ -n "$ours" ]; then
		echo "not ok - selftests: tcptw: KCSAN: no data race in tcptw"
		echo "$ours" | sed 's/^/# /'
		dmesg | tail -n +$((dmesg_start + 1)) |
			awk '/BUG: KCSAN:/ { inb = 1; n = 0; buf = "" }
			inb { buf = buf $0 "\n" }
			inb && /\[tcptw\]/ { ours = 1 }
			inb && /====================/ { inb = 0; if (ours && shown++ < 3) printf "%s", buf; ours = 0 }' |
			sed 's/^/# | /'
		rc=1
	else
		echo "ok - selftests: tcptw: KCSAN: no data race in tcptw ($(kcsan_reports theirs | wc -l) reports of the kernel's own)"
	fi
fi
if [ $lockdep = 1 ] && ! lockdep_on; then
	echo "not ok - selftests: tcptw: lockdep still on at the end"
	rc=1
fi
exit $rc
