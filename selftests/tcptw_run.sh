#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# `tcptw run -- CMD` and `tcptw conntrack` against the kernel's own
# numbers:
#
#   cli 198.18.0.1 --- veth --- srv 198.18.0.2:8081 (backlog 2, never accepts)
#   ct: lo only, an nft rule that tracks, 127.0.0.1:9000
#
# 1. `tcptw run -j -N srv -- <a burst of connects from cli>`: the report's
#    TcpExtListenOverflows delta == the netns's MIB delta over the run (and
#    the module's ListenOverflow == it), [accept_queue] named, the
#    listener's row, exit 3 with --fail-on-diagnosis.
# 2. A control run with nothing failing: no cause, and CMD's exit status
#    (7) kept even with --fail-on-diagnosis.
# 3. SIGTERM to tcptw alone reaches CMD (exit 143) and the report is
#    still printed, marked interrupted.
# 5. As nobody, in a netns of its own: CMD runs, its output on stdout,
#    the report on stderr, exit 0 (no setns() into its own netns).
# 4. `tcptw conntrack -j` in ct after 20 loopback connections: its counts
#    by TCP state == `conntrack -L`'s; with nf_conntrack_max at the count,
#    diagnose names conntrack_full with the TIME_WAIT entries and the
#    loopback upstream's notrack remedy; applied as printed, the same
#    20 connections leave no entry. Then `tcptw run` around 5 tracked
#    connections: its conntrack entries at the start, peak and end ==
#    `conntrack -C` before and after.

source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip nft conntrack python3
require_traffic
require_module
require_cli

CT_MAX_SAVED=
test_cleanup()
{
	[ -n "$CT_MAX_SAVED" ] &&
		sysctl -qw net.netfilter.nf_conntrack_max="$CT_MAX_SAVED"
}

test_overflow()
{
	local T="run: accept-queue overflow == TcpExt ListenOverflows" out rc
	local m0 m1 want

	test_begin "$T"
	pair_setup || { check_err 1 "setup failed"; log_test "$T"; return; }
	server_start "$srv" "$TMPDIR_T/ovf.srv" --listen 198.18.0.2:8081 \
		--no-accept --backlog 2 --timeout 60 ||
		{ check_err 1 "no server"; log_test "$T"; return; }
	out=$TMPDIR_T/ovf.json
	m0=$(mib "$srv" TcpExtListenOverflows)
	# CMD's stdout is its own: the burst's JSON goes to a file of its own
	timeout 90 "$TCPTW_CLI" run -j -o "$out" --fail-on-diagnosis -N "$srv" -- \
		sh -c "timeout 60 ip netns exec $cli python3 $LIB_DIR/tcptw_sock.py \
		burst 198.18.0.2 8081 8 10 3 >$TMPDIR_T/ovf.cli" \
		>"$out.stdout" 2>"$out.err"
	rc=$?
	# the report to -o FILE: stdout is CMD's alone, empty here
	check_eq "stdout holds CMD's output only" "$(wc -c <"$out.stdout")" 0
	m1=$(mib "$srv" TcpExtListenOverflows)
	want=$((m1 - m0))
	diag "burst: $(cat "$TMPDIR_T/ovf.cli"); report: $(head -c 600 "$out")"
	check_gt "ListenOverflows over the run" "$want" 0
	check_eq "report's TcpExtListenOverflows delta" \
		"$(jqr "$out" '.namespaces[0].mib.TcpExtListenOverflows.delta')" \
		"$want"
	check_mod_eq "report's ListenOverflow delta" \
		"$(jqr "$out" '.namespaces[0].counters.ListenOverflow.delta')" \
		"$want"
	check_eq "exit status with --fail-on-diagnosis" "$rc" 3
	check_eq "CMD's exit code in the report" \
		"$(jqr "$out" '.exit_code')" 0
	check_eq "accept_queue named" \
		"$(jqr "$out" '[.namespaces[0].findings[] | select(.id == "accept_queue")] | length')" 1
	check_mod_eq "listener row 198.18.0.2:8081 moved by the overflows" \
		"$(jqr "$out" '[.namespaces[0].listeners[] | select(.port == 8081) | .moved][0]')" \
		"$want"
	kill "$SERVER_PID" 2>/dev/null
	log_test "$T"
	cleanup_ns "$cli" "$srv"
}

test_control()
{
	local T="run: control run, no cause, CMD's exit status kept" out rc

	test_begin "$T"
	pair_setup || { check_err 1 "setup failed"; log_test "$T"; return; }
	server_start "$srv" "$TMPDIR_T/ctl.srv" --listen 198.18.0.2:8082 \
		--count 5 --timeout 60 ||
		{ check_err 1 "no server"; log_test "$T"; return; }
	out=$TMPDIR_T/ctl.json
	timeout 90 "$TCPTW_CLI" run -j --fail-on-diagnosis -N "$srv" -N "$cli" -- \
		sh -c "timeout 60 $TRAFFIC client --connect 198.18.0.2:8082 \
		--count 5 --netns $(nspath "$cli") --timeout 30 >/dev/null; exit 7" \
		2>"$out" >"$out.stdout"
	rc=$?
	diag "report: $(head -c 400 "$out")"
	check_eq "exit status (CMD's 7, no cause)" "$rc" 7
	check_eq "namespaces reported" \
		"$(jqr "$out" '.namespaces | length')" 2
	check_eq "findings in srv and cli" \
		"$(jqr "$out" '[.namespaces[].findings | length] | add')" 0
	check_eq "TcpPassiveOpens delta in srv" \
		"$(jqr "$out" '.namespaces[0].mib.TcpPassiveOpens.delta')" 5
	kill "$SERVER_PID" 2>/dev/null
	log_test "$T"
	cleanup_ns "$cli" "$srv"
}

test_signal()
{
	local T="run: SIGTERM reaches CMD, the report is printed" out pid rc

	test_begin "$T"
	out=$TMPDIR_T/sig.json
	"$TCPTW_CLI" run -j -o "$out" -- sleep 60 >"$out.stdout" 2>"$out.err" &
	pid=$!
	# tcptw has forked once sleep is its child
	busywait 10000 pgrep -P "$pid" sleep >/dev/null ||
		diag "sleep did not start in 10 s"
	kill -TERM "$pid"
	timeout 30 tail --pid="$pid" -f /dev/null
	wait "$pid"
	rc=$?
	# tcptw dies of CMD's signal, as perf stat: the shell says 143
	check_eq "exit status (killed by SIGTERM)" "$rc" 143
	check_eq "signal in the report" "$(jqr "$out" '.signal')" 15
	check_eq "interrupted" "$(jqr "$out" 'if .interrupted then 1 else 0 end')" 1
	log_test "$T"
}

# lo_connects TAG : 20 connections to a server on 127.0.0.1:9000 in $ct,
# the client closing first (client JSON in $TMPDIR_T/TAG.cli.json, its
# exit status in LO_RC); 1 if the server did not start
lo_connects()
{
	server_start "$ct" "$TMPDIR_T/$1.srv" --listen 127.0.0.1:9000 \
		--count 20 --timeout 60 --close-first client || return 1
	timeout 60 "$TRAFFIC" client --connect 127.0.0.1:9000 --count 20 \
		--netns "$(nspath "$ct")" --close-first client --timeout 30 \
		>"$TMPDIR_T/$1.cli.json"
	LO_RC=$?
	bg_wait "$SERVER_PID"
	return 0
}

# ct_filters CT_JSON : tcptw conntrack's filters, count and status
# breakdown (CT_JSON: its -j output a moment ago) against
# conntrack-tools' own on the same table
ct_filters()
{
	local out=$1 f=$TMPDIR_T/ct.filt.json

	check_eq "conntrack -C: tcptw == conntrack-tools" \
		"$(nsx "$ct" "$TCPTW_CLI" conntrack -C -j | jq -r '.conntrack.entries')" \
		"$(nsx "$ct" conntrack -C)"
	nsx "$ct" "$TCPTW_CLI" conntrack -j --proto tcp --state TIME_WAIT \
		--dst 127.0.0.1 >"$f"
	check_eq "conntrack --proto tcp --state TIME_WAIT --dst 127.0.0.1: matched == conntrack -L's" \
		"$(jqr "$f" '.conntrack.census.matched')" \
		"$(nsx "$ct" conntrack -L -p tcp --state TIME_WAIT -d 127.0.0.1 2>/dev/null | grep -c .)"
	check_eq "conntrack status assured == conntrack -L's [ASSURED]" \
		"$(jqr "$out" '.conntrack.census.status.assured')" \
		"$(nsx "$ct" conntrack -L 2>/dev/null | grep -c ASSURED)"
	check_eq "conntrack status unreplied == conntrack -L's [UNREPLIED]" \
		"$(jqr "$out" '.conntrack.census.status.unreplied')" \
		"$(nsx "$ct" conntrack -L 2>/dev/null | grep -c UNREPLIED)"
	nsx "$ct" "$TCPTW_CLI" conntrack -j --proto udp >"$f"
	check_eq "conntrack --proto udp: matched (control)" \
		"$(jqr "$f" '.conntrack.census.matched')" 0
}

# run_ct_entries : tcptw run around 5 connections to :9001 (tracked:
# the notrack rules are :9000's): the report's conntrack entries at the
# start, peak and end == conntrack -C's before and after
run_ct_entries()
{
	local rep=$TMPDIR_T/ct.run.json before after

	server_start "$ct" "$TMPDIR_T/ct3.srv" --listen 127.0.0.1:9001 \
		--count 5 --timeout 60 --close-first client ||
		{ check_err 1 "no server on :9001"; return; }
	before=$(nsx "$ct" conntrack -C)
	ip netns exec "$ct" "$TCPTW_CLI" run -j -o "$rep" -- \
		"$TRAFFIC" client --connect 127.0.0.1:9001 --count 5 \
		--close-first client --timeout 30 >/dev/null
	check_err $? "tcptw run around 5 connections"
	bg_wait "$SERVER_PID"
	after=$(nsx "$ct" conntrack -C)
	diag "conntrack -C before $before, after $after; report: $(jq -c "$JQ_NS"' | .conntrack_entries' "$rep")"
	check_eq "run: conntrack entries at the start == conntrack -C before" \
		"$(jqr "$rep" "$JQ_NS"' | .conntrack_entries.start')" "$before"
	check_eq "run: conntrack entries at the end == conntrack -C after" \
		"$(jqr "$rep" "$JQ_NS"' | .conntrack_entries.end')" "$after"
	# TIME_WAIT entries live 120 s: the table only grew
	check_eq "run: conntrack entries' peak == the end" \
		"$(jqr "$rep" "$JQ_NS"' | .conntrack_entries.peak')" "$after"
	check_eq "conntrack -C after == before + 5" "$after" $((before + 5))
}

test_conntrack()
{
	local T="conntrack: counts by state == conntrack -L, diagnose names them"
	local out got want count rules

	test_begin "$T"
	setup_ns ct || { check_err 1 "setup failed"; log_test "$T"; return; }
	printf '%s\n' "table inet trk {" "chain out {" \
		"type filter hook output priority 0; policy accept;" \
		"ct state new counter" "}" "}" | nsx "$ct" nft -f - ||
		{ check_err 1 "nft"; log_test "$T"; return; }
	lo_connects ct || { check_err 1 "no server"; log_test "$T"; return; }
	out=$TMPDIR_T/ct.json
	# the same moment: TIME_WAIT entries live 120 s, nothing else runs
	ip netns exec "$ct" "$TCPTW_CLI" conntrack -j >"$out" 2>"$out.err"
	want=$(ct_states "$ct")
	got=$(tcptw_ct_states "$out")
	diag "conntrack -L: $(echo $want); tcptw: $(echo $got)"
	check_eq "TIME_WAIT entries (conntrack -L)" \
		"$(awk '$1 == "TIME_WAIT" { print $2 }' <<<"$want")" 20
	if [ "$got" = "$want" ]; then
		diag "  ok: counts by state equal"
	else
		check_err 1 "counts by state differ"
	fi
	check_eq "entries dumped == nf_conntrack_count" \
		"$(jqr "$out" '.conntrack.census.dumped')" \
		"$(nsx "$ct" cat /proc/sys/net/netfilter/nf_conntrack_count)"
	check_eq "top destination tcp 127.0.0.1:9000" \
		"$(jqr "$out" '[.conntrack.census.destinations[] | select(.endpoint == "127.0.0.1:9000") | .entries][0]')" 20
	ct_filters "$out"
	# a full table: the max (global) at this netns's count
	count=$(nsx "$ct" cat /proc/sys/net/netfilter/nf_conntrack_count)
	CT_MAX_SAVED=$(cat /proc/sys/net/netfilter/nf_conntrack_max)
	sysctl -qw net.netfilter.nf_conntrack_max="$count"
	ip netns exec "$ct" "$TCPTW_CLI" diagnose -j --since 0.2 \
		>"$TMPDIR_T/ct.diag" 2>&1
	sysctl -qw net.netfilter.nf_conntrack_max="$CT_MAX_SAVED"
	CT_MAX_SAVED=
	diag "diagnose: $(head -c 1500 "$TMPDIR_T/ct.diag")"
	check_eq "conntrack_full names the TIME_WAIT entries" \
		"$(jqr "$TMPDIR_T/ct.diag" '[.findings[] | select(.id == "conntrack_full") | .evidence[] | select(.name == "conntrack tcp TIME_WAIT") | .value][0]')" 20
	check_eq "remedy: notrack for the loopback upstream on :9000" \
		"$(jqr "$TMPDIR_T/ct.diag" 'if any(.findings[]; .remedy | contains("notrack rule for the loopback upstream on :9000")) then 1 else 0 end')" 1
	# the remedy applied as printed: the commands diagnose -j gives for
	# it (the TIME_WAIT timeout, notrack both ways in a raw output
	# chain); the same 20 connections then leave no entry toward :9000
	# (nor its replies')
	diag "remedy commands: $(remedy_commands "$TMPDIR_T/ct.diag" conntrack_full | tr '\n' ';')"
	check_eq "nft notrack rules among the commands" \
		"$(remedy_commands "$TMPDIR_T/ct.diag" conntrack_full |
			grep -c '^nft add rule .* oif lo tcp [ds]port 9000 notrack$')" 2
	remedy_apply "$ct" "$TMPDIR_T/ct.diag" conntrack_full
	check_str "conntrack_full: the host's alone" "$APP" false
	nsx "$ct" conntrack -F 2>/dev/null
	lo_connects ct2 || { check_err 1 "no server"; log_test "$T"; return; }
	check_err "$LO_RC" "client failed with the remedy applied"
	check_eq "connections with the remedy applied" \
		"$(json_get "$TMPDIR_T/ct2.cli.json" ok)" 20
	check_eq "conntrack entries with port 9000 after them" \
		"$(nsx "$ct" conntrack -L 2>/dev/null | grep -c 'port=9000')" 0
	run_ct_entries
	log_test "$T"
	cleanup_ns "$ct"
}

test_unprivileged()
{
	local T="run: as nobody, in its own netns: CMD runs, the report, exit 0"
	local out rc

	test_begin "$T"
	setup_ns un || { check_err 1 "setup failed"; log_test "$T"; return; }
	out=$TMPDIR_T/nobody
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups \
		test -x "$TCPTW_CLI"; then
		diag "SKIP: nobody cannot run $TCPTW_CLI"
		log_test "$T"
		cleanup_ns "$un"
		return
	fi
	ip netns exec "$un" setpriv --reuid=65534 --regid=65534 \
		--clear-groups "$TCPTW_CLI" run -j -- echo hi \
		>"$out.stdout" 2>"$out.stderr"
	rc=$?
	diag "stderr: $(head -c 600 "$out.stderr")"
	check_eq "exit status" "$rc" 0
	check_str "CMD's output on stdout" "$(cat "$out.stdout")" hi
	tail -n 1 "$out.stderr" >"$out.json"
	check_str "the report, last on stderr" \
		"$(jqr "$out.json" '.command | join(" ")')" "echo hi"
	log_test "$T"
	cleanup_ns "$un"
}

tests_run \
	test_overflow \
	test_control \
	test_signal \
	test_unprivileged \
	test_conntrack
