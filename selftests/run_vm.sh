#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# run_vm.sh KO_PATH [TEST...] : what runs inside the QEMU guest
# (scripts/vng-run.sh): insmod the module, run the whole selftest suite, or
# only the tcptw_*.sh scripts named (KTAP), rmmod, and fail
# if the kernel logged a BUG/WARNING/Oops meanwhile. Every step is bounded
# with timeout(1). Exit status: 0 only if everything passed.

ko=${1:?usage: run_vm.sh KO_PATH [TEST...]}
shift
tests=("$@")
here=$(cd "$(dirname "$0")" && pwd)
rc=0

ko=$(cd "$(dirname "$ko")" && pwd)/$(basename "$ko")
# the test build (TCPTW_TEST=1) that scripts/check.sh puts beside it
if [ -z "${TCPTW_TEST_KO:-}" ] && [ -r "$(dirname "$ko")-test/tcptw.ko" ]; then
	export TCPTW_TEST_KO=$(dirname "$ko")-test/tcptw.ko
fi
dmesg_start=$(dmesg | wc -l)
echo "# run_vm: kernel $(uname -r), module $ko"

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

# the whole suite, bounded: an hour per unit of the kernel's slowness
bound=$((3600 * ${TCPTW_TIMEOUT_MULT:-1}))
if [ ${#tests[@]} -gt 0 ]; then
	(cd "$here" && TCPTW_KO=$ko timeout $bound ./run_tests.sh "${tests[@]}") || rc=1
else
	TCPTW_KO=$ko timeout $bound make -s -C "$here" run || rc=1
fi

# A kretprobe with no free instance skips a call, and tcptw's counter with
# it (the fourth column, since the last load; maxactive is sized so that
# it never should).
if [ -r /proc/net/tcptw/probes ]; then
	missed=$(timeout 10 awk -F'\t' '$4 > 0 { printf " %s=%s", $1, $4 }' \
		/proc/net/tcptw/probes)
	if [ -n "$missed" ]; then
		echo "not ok - selftests: tcptw: no kretprobe call missed:$missed"
		rc=1
	else
		echo "# kretprobe calls missed during the suite: 0"
	fi
fi

if grep -q '^tcptw ' /proc/modules; then
	timeout 60 rmmod tcptw || { echo "# rmmod tcptw failed"; rc=1; }
fi

bad=$(dmesg | tail -n +$((dmesg_start + 1)) |
	grep -E 'BUG|WARNING|Oops|general protection|Call Trace')
if [ -n "$bad" ]; then
	echo "not ok - selftests: tcptw: kernel log clean"
	echo "$bad" | head -n 40 | sed 's/^/# /'
	rc=1
else
	echo "# kernel log since the start: no BUG/WARNING/Oops"
fi
exit $rc
