#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# run_tests.sh TEST... : run each tcptw_*.sh (bounded by `settings`) and
# print one KTAP stream in kselftest's runner format: a top-level plan,
# each script's own KTAP indented as "# " diagnostics, one ok/not ok line
# per script, then a plain summary line
#   selftests: P passed, F failed, S skipped
# Exit status: 0 if nothing failed, else 1.

cd "$(dirname "$0")" || exit 1

timeout_s=$(sed -n 's/^timeout=//p' settings 2>/dev/null)
timeout_s=${timeout_s:-600}
# slow guests (scripts/kernels.sh's "slow" column) stretch every bound
timeout_s=$((timeout_s * ${TCPTW_TIMEOUT_MULT:-1}))
pass=0 fail=0 skip=0 n=0
sidf=$(mktemp /tmp/tcptw-run.sid.XXXXXX)
rcf=$(mktemp /tmp/tcptw-run.rc.XXXXXX)

echo "TAP version 13"
echo "1..$#"
for t in "$@"; do
	t=${t#./}
	n=$((n + 1))
	echo "# selftests: tcptw: $t"
	t0=$SECONDS
	# The script runs in a session of its own; once it has exited (or
	# timed out), whatever it left behind is killed, or a background
	# helper still holding the pipe would keep sed, and us, waiting.
	(
		timeout --foreground -k 10 "$timeout_s" \
			setsid bash -c 'echo $$ >"$1"; exec "./$2"' sh "$sidf" "$t"
		echo $? >"$rcf"
		[ -s "$sidf" ] && pkill -KILL -s "$(cat "$sidf")" 2>/dev/null
	) 2>&1 | sed -u 's/^/# /'
	rc=$(cat "$rcf" 2>/dev/null)
	rc=${rc:-1}
	rm -f "$sidf" "$rcf"
	echo "# $t: $((SECONDS - t0)) s"
	case $rc in
	0)	pass=$((pass + 1)); echo "ok $n selftests: tcptw: $t" ;;
	4)	skip=$((skip + 1)); echo "ok $n selftests: tcptw: $t # SKIP" ;;
	124)	fail=$((fail + 1))
		echo "not ok $n selftests: tcptw: $t # TIMEOUT ${timeout_s} seconds" ;;
	*)	fail=$((fail + 1)); echo "not ok $n selftests: tcptw: $t # exit=$rc" ;;
	esac
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
echo "selftests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
