#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# Sourced by lib.sh: the tools the tests drive and read. tcptw_traffic
# (its server, its JSON summary), nginx's configuration, conntrack's
# table, and the CLI's diagnose and run reports (read with jq).

require_traffic()
{
	if [ ! -x "$TRAFFIC" ]; then
		make -s -C "$LIB_DIR" tcptw_traffic >/dev/null 2>&1
	fi
	if [ ! -x "$TRAFFIC" ]; then
		echo "SKIP: $TRAFFIC not built (make -C selftests)"
		exit $ksft_skip
	fi
}
# require_cli : skip the script (exit 4) without the tcptw CLI
require_cli()
{
	[ -x "$TCPTW_CLI" ] && return 0
	echo "SKIP: the tcptw CLI is not built ($TCPTW_CLI; make userspace)"
	exit $ksft_skip
}
# json_get FILE KEY : a number from tcptw_traffic's JSON summary; KEY may be
# errors.NAME. Prints 0 if absent.
json_get()
{
	local file=$1 key=${2#errors.} c="" re

	# bash only: the reload test reads three keys of fifty files
	[ -r "$file" ] && IFS= read -r -d '' c <"$file"
	re="\"$key\":([-0-9.]*)"
	if [[ $c =~ $re ]] && [ -n "${BASH_REMATCH[1]}" ]; then
		echo "${BASH_REMATCH[1]}"
	else
		echo 0
	fi
}
# ts_offset_per_host FILE : true if, in tcptw_traffic --verbose output, the
# TS clock (TCP_TIMESTAMP) of successive connections from one namespace
# moves on like one clock, i.e. the kernel's TS offset depends on the
# addresses only (6.1 before 6.1.18x). False if each connection has its
# own offset (ports hashed in: 6.12.95+, 6.1.192 "tcp: secure_seq: add
# back ports to TS offset", CVE-2026-23247).
ts_offset_per_host()
{
	grep -o '"ns":[0-9]*,"lport":[0-9]*,"connect_ms":[0-9.]*,"retrans":[0-9]*,"tsval":[0-9]*' "$1" |
		tr ',:' '  ' | awk '
		{ ns = $2; t = $10
		  if (ns in prev) {
			d = (t - prev[ns]) % 4294967296
			if (d < 0) d += 4294967296
			if (d > 60000) bad++
			n++
		  }
		  prev[ns] = t }
		END { exit !(n > 0 && bad == 0) }'
}
# require_sock_py : PY (python3) and SOCK (tcptw_sock.py, the socket and
# packet helper), or the script skips
require_sock_py()
{
	PY=/usr/bin/python3
	SOCK=$LIB_DIR/tcptw_sock.py
	[ -x "$PY" ] || { echo "SKIP: $PY not installed"; exit "$ksft_skip"; }
}

# server_start NS OUTFILE ARGS... : start tcptw_traffic server in @ns and
# wait (bounded) until it listens. Sets $SERVER_PID. Several servers
# start at once with server_spawn each, then server_ready each.
server_start()
{
	server_spawn "$@" && server_ready "$1" "$2"
}
# server_spawn NS OUTFILE ARGS... : start it only; sets $SERVER_PID
server_spawn()
{
	local ns=$1 out=$2; shift 2

	rm -f "$out.ready"
	bg_start "$out" "$TRAFFIC" server --netns "$(nspath "$ns")" \
		--ready-file "$out.ready" "$@"
	SERVER_PID=$BG_PID
}
# server_ready NS OUTFILE : wait (bounded) until that server listens
server_ready()
{
	busywait 5000 test -e "$2.ready" && return 0
	diag "server in $1 did not start: $(cat "$2.err")"
	return 1
}
# save_baseline NS NAME : `tcptw diagnose --save-baseline` in NS, to
# $TMPDIR_T/NAME.base
save_baseline()
{
	ip netns exec "$1" "$TCPTW_CLI" diagnose --save-baseline \
		"$TMPDIR_T/$2.base" >/dev/null
}
# diagnose NS NAME : `tcptw diagnose -j` in NS against the baseline of
# NAME; output in $TMPDIR_T/NAME.diag.json, exit code in $DIAG_RC
diagnose()
{
	ip netns exec "$1" "$TCPTW_CLI" diagnose -j \
		--baseline "$TMPDIR_T/$2.base" >"$TMPDIR_T/$2.diag.json" \
		2>"$TMPDIR_T/$2.diag.err"
	DIAG_RC=$?
	diag "$2: diagnose exit $DIAG_RC: $(head -c 600 "$TMPDIR_T/$2.diag.json")"
}
# The JSON helpers below use jq, not python: a python start costs a
# second in a TCG guest beside another, and a script reads dozens.
# JQ_NS: a diagnose -j output, or the first netns of a `tcptw run -j`
# report
JQ_NS='(if has("namespaces") then .namespaces[0] else . end)'
# findings FILE : the ids of a diagnose -j output, or of the first netns
# of a `tcptw run -j` report, sorted, space-separated
findings()
{
	jq -r "$JQ_NS"' | [.findings[].id] | sort | join(" ")' "$1"
}
# evidence FILE NAME [FIELD] : the FIELD (default delta; value for a
# gauge or sysctl) the first finding that has one gives for evidence NAME
# (diagnose -j, or the first netns of a run -j report); "none" if none
evidence()
{
	jq -r --arg n "$2" --arg f "${3:-delta}" "$JQ_NS"' |
		[.findings[].evidence[] | select(.name == $n and has($f)) | .[$f]] |
		if length > 0 then .[0] else "none" end' "$1"
}
# nginx_conf_write DIR MASTER WORKER_CONNECTIONS LOG_LEVEL [MAIN...] :
# DIR/nginx.conf for a test's nginx: everything it writes kept under DIR
# (pid, error.log at LOG_LEVEL, temp paths), one worker, daemon off,
# master_process MASTER (on|off), access log off, the main-context
# directives MAIN (e.g. "worker_rlimit_nofile 8192;"), and the rest of
# the http{} block (upstreams, servers) read from stdin.
nginx_conf_write()
{
	local dir=$1 master=$2 wc=$3 level=$4 t
	shift 4

	mkdir -p "$dir"
	{
		printf '%s\n' "daemon off;" "master_process $master;" \
			"worker_processes 1;" "pid $dir/nginx.pid;" \
			"error_log $dir/error.log $level;" "$@" \
			"events { worker_connections $wc; }" "http {" \
			"access_log off;"
		for t in client_body proxy fastcgi uwsgi scgi; do
			mkdir -p "$dir/$t"
			echo "${t}_temp_path $dir/$t;"
		done
		cat
		echo "}"
	} >"$dir/nginx.conf"
}
# jqr FILE FILTER : jq's FILTER over FILE, raw; "" on error or null
jqr()
{
	jq -r "($2) // \"\"" "$1" 2>/dev/null
}
# report_delta FILE SECTION NAME... : the sum of the NAMEs' deltas in the
# first netns of a `tcptw run -j` report (SECTION: counters, mib or
# conntrack). The report lists the counters that moved: one it does not
# list moved by 0. "none" if FILE is no report.
report_delta()
{
	local file=$1 sec=$2
	shift 2

	jq -r --arg s "$sec" 'if (.namespaces | type) == "array" and
		(.namespaces | length) > 0 then
		(.namespaces[0][$s] // {}) as $m |
		[$ARGS.positional[] | ($m[.].delta // 0)] | add // 0
		else "none" end' "$file" --args "$@" 2>/dev/null || echo none
}
# ct_states NS : "STATE count" lines of `conntrack -L -p tcp` in NS, sorted
ct_states()
{
	nsx "$1" conntrack -L -p tcp 2>/dev/null |
		awk '$1 == "tcp" { n[$4]++ } END { for (s in n) print s, n[s] }' |
		LC_ALL=C sort
}
# tcptw_ct_states FILE : the same from `tcptw conntrack -j` output
tcptw_ct_states()
{
	jqr "$1" '.conntrack.census.tcp_states | to_entries | sort_by(.key) |
		map("\(.key) \(.value.entries)") | join("\n")'
}
# jstr KEY : the string (or true/false) KEY of $OUT's JSON line (a
# tcptw_sock.py result)
jstr()
{
	local c re="\"$1\":\"?([A-Za-z0-9_]*)"

	c=$(cat "$OUT" 2>/dev/null)
	[[ $c =~ $re ]] && echo "${BASH_REMATCH[1]}"
}
# addr_port ADDR PORT : ADDR:PORT, bracketed for IPv6
addr_port()
{
	case $1 in
	*:*) echo "[$1]:$2" ;;
	*) echo "$1:$2" ;;
	esac
}
# remedy_commands FILE ID : the "commands" of finding ID in FILE (a
# diagnose -j output or a run -j report), one line each
remedy_commands()
{
	jq -r --arg id "$2" "$JQ_NS"' | .findings[] | select(.id == $id) |
		.commands | join("\n")' "$1"
}
# remedy_app FILE ID : finding ID's "application" in FILE (true: the
# rest of the remedy is the application's)
remedy_app()
{
	jq -r --arg id "$2" "$JQ_NS"' | .findings[] | select(.id == $id) |
		.application' "$1"
}
# remedy_apply NS FILE ID : run in NS, as printed, every command of
# finding ID in FILE; APPLIED: how many ran, APP: the finding's
# "application". False if one failed (a test error).
remedy_apply()
{
	local ns=$1 file=$2 id=$3 c

	APPLIED=0
	APP=$(remedy_app "$file" "$id")
	while IFS= read -r c; do
		[ -n "$c" ] || continue
		diag "applying in $ns: $c"
		if ! ip netns exec "$ns" sh -c "$c" >/dev/null; then
			check_err 1 "remedy command failed: $c"
			return 1
		fi
		APPLIED=$((APPLIED + 1))
	done < <(remedy_commands "$file" "$id")
}
# check_findings NAME FILE WANT [MAY...] : diagnose's (or a run's) findings
# in FILE include every id of WANT (a space-separated list) and nothing
# but those and the MAY ids: findings that a starved guest adds on its
# own (a load tool's timeouts resetting idle connections) are allowed by
# name, nothing else is.
check_findings()
{
	local name=$1 file=$2 want=$3 got id bad=""
	shift 3

	got=$(findings "$file")
	for id in $want; do
		[[ " $got " == *" $id "* ]] || bad+=" missing:$id"
	done
	for id in $got; do
		[[ " $want $* " == *" $id "* ]] || bad+=" unexpected:$id"
	done
	if [ -z "$bad" ]; then
		diag "  ok: $name: '$got'${*:+ (allowed besides: $*)}"
	else
		diag "  FAIL: $name: got '$got', want '$want'${*:+ (and maybe: $*)}:$bad"
		check_err 1 "$name: got '$got', want '$want'"
	fi
}
