#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# The wire oracle (sourced by lib.sh): a bounded packet trace of one
# interface in a test's namespace, read by tcptw_wire.py into what each
# connection's packets say happened (per 4-tuple, per client address and
# per listener), for the tests to compare tcptw's counters with. A truth
# tcptw does not compute: it reads no MIB and no module state.
#
#   wire_start TAG NS IFACE [FILTER...]   tcpdump in NS on IFACE (default
#                                          filter: tcp), TCPTW_WIRE=0 skips
#   wire_stop                              ends the trace and reads it
#   wire_get JQ                            a value of the analysis (jq path
#                                          on tcptw_wire.py's JSON), 0 if null
#   check_wire_eq WHAT GOT JQ              GOT == the wire's value; a trace
#                                          K packets short of what the
#                                          filter took: wire <= GOT <= wire + K
#   check_wire_upto WHAT GOT JQ JQ_MORE    wire <= GOT <= wire + the
#                                          wire's JQ_MORE (packets that
#                                          may or may not count) + K
#   wire_dump [WHY]                        the trace, on failure or with WHY
#   wire_explain KEY                       the packets the wire counted in
#                                          KEY (each with the 3 before it)

WIRE_PCAP=
WIRE_JSON=
WIRE_PID=
WIRE_MISS=
WIRE_LO=0

wire_start()
{
	local tag=$1 ns=$2 ifc=$3; shift 3
	local filter=("$@")

	if [ -n "$WIRE_PID" ]; then	# a run given up half-way
		kill "$WIRE_PID" 2>/dev/null
		bg_wait "$WIRE_PID"
		WIRE_PID=
	fi
	WIRE_PCAP= WIRE_JSON= WIRE_MISS=
	[ "${TCPTW_WIRE:-1}" = 1 ] || return 0
	[ ${#filter[@]} -gt 0 ] || filter=(tcp)
	WIRE_PCAP=$TMPDIR_T/$tag.pcap
	WIRE_LO=0
	[ "$ifc" = lo ] && WIRE_LO=1
	bg_start "$WIRE_PCAP.log" timeout 600 ip netns exec "$ns" \
		tcpdump -Z root --immediate-mode -i "$ifc" -U -s 128 \
		-w "$WIRE_PCAP" "${filter[@]}"
	WIRE_PID=$BG_PID
	busywait 10000 grep -q "listening on" "$WIRE_PCAP.log.err" ||
		diag "wire: tcpdump did not start: $(cat "$WIRE_PCAP.log.err")"
}

wire_stop()
{
	[ -n "$WIRE_PID" ] || return 0
	sleep 0.3	# let tcpdump write the last packets
	kill "$WIRE_PID" 2>/dev/null
	bg_wait "$WIRE_PID"
	WIRE_PID=
	# on lo the filter sees each packet twice (libpcap drops the
	# outgoing copy after it): what it took is half its count there
	WIRE_MISS=$(awk -v lo="$WIRE_LO" '/packets captured/ { c = $1 }
		/received by filter/ { r = $1 } /dropped by kernel/ { d = $1 }
		END { if (c == "" || r == "") exit
		      m = (lo ? int(r / 2) : r) - c + d
		      print (m > 0 ? m : 0) }' "$WIRE_PCAP.log.err")
	WIRE_JSON=$WIRE_PCAP.json
	if ! "${PY:-/usr/bin/python3}" "$LIB_DIR/tcptw_wire.py" "$WIRE_PCAP" \
	     >"$WIRE_JSON" 2>"$WIRE_JSON.err"; then
		check_err 1 "wire: tcptw_wire.py failed: $(cat "$WIRE_JSON.err")"
		WIRE_JSON=
		return 1
	fi
	diag "wire: $(jq -c '.totals | with_entries(select(.value != 0))' "$WIRE_JSON")${WIRE_MISS:+ (missing $WIRE_MISS)}"
}

wire_get()
{
	[ -n "$WIRE_JSON" ] || return 1
	jq -r "($1) // 0" "$WIRE_JSON"
}

# _check_wire EQ RANGE WHAT GOT JQ : GOT against the wire's JQ with the
# checks EQ and RANGE (the module's, or any value's)
_check_wire()
{
	local eq=$1 range=$2 what=$3 got=$4 wire

	wire=$(wire_get "$5") || return 0
	if [ "${WIRE_MISS:-0}" = 0 ]; then
		"$eq" "$what == wire $5" "$got" "$wire"
	else
		"$range" "$what: wire $5 (trace $WIRE_MISS packets short)" \
			"$got" "$wire" $((wire + WIRE_MISS))
	fi
	_wire_explain_outside "$got" "$wire" $((wire + ${WIRE_MISS:-0})) "$5"
}

# _wire_explain_outside GOT LO HI JQ... : GOT outside LO..HI, the packets
# of each JQ's count (which packets made the wire's count: a
# disagreement's first clue)
_wire_explain_outside()
{
	local got=$1 lo=$2 hi=$3 jq

	shift 3
	[[ "$got" =~ ^[0-9]+$ ]] || return 0
	[ "$got" -lt "$lo" ] || [ "$got" -gt "$hi" ] || return 0
	for jq in "$@"; do
		wire_explain "${jq##*.}"
	done
}

wire_explain()
{
	local key=$1 nums

	[ -n "$WIRE_JSON" ] || return 0
	nums=$(jq -r --arg k "$key" '(.explain[$k] // [])[:30] | map(tostring) | join(" ")' \
		"$WIRE_JSON")
	diag "wire: packets counted as $key (trace numbers, first 30): ${nums:-none}"
	[ -n "$nums" ] || return 0
	tcpdump -r "$WIRE_PCAP" -nn -ttttt 2>/dev/null |
		awk -v want="$nums" 'BEGIN { n = split(want, w, " ")
				for (i = 1; i <= n; i++) m[w[i]] = 1 }
			{ l[NR] = $0 }
			NR in m { for (i = NR - 3; i < NR; i++)
					if (i > 0) printf "#      %5d   %s\n", i, l[i]
				  printf "#    * %5d   %s\n", NR, $0 }' | head -n 160
}

check_wire_eq() { _check_wire check_mod_eq check_mod_range "$@"; }

check_wire_upto()
{
	local what=$1 got=$2 lo more

	lo=$(wire_get "$3") || return 0
	more=$(wire_get "$4") || return 0
	check_mod_range "$what: wire $3 .. + $4${WIRE_MISS:+ + $WIRE_MISS missed}" \
		"$got" "$lo" $((lo + more + ${WIRE_MISS:-0}))
	_wire_explain_outside "$got" "$lo" $((lo + more + ${WIRE_MISS:-0})) "$3" "$4"
}

# check_wire_raw WHAT GOT JQ : as check_wire_eq for a value that is not
# the module's (the client's, a MIB's), checked with or without it
check_wire_raw() { _check_wire check_eq check_range "$@"; }

wire_dump()
{
	[ -n "$WIRE_PCAP" ] && [ -s "$WIRE_PCAP" ] || return 0
	[ "$RET" -ne 0 ] || [ -n "${1:-}" ] || return 0
	[ -n "${1:-}" ] && diag "wire: $1"
	[ -n "$WIRE_JSON" ] && diag "wire flows: $(jq -c '[.flows[] | with_entries(select(.value != 0))]' "$WIRE_JSON" | head -c 4000)"
	diag "wire trace (tcpdump -r, first 200 packets):"
	tcpdump -r "$WIRE_PCAP" -nn -ttttt 2>/dev/null | head -n 200 | sed 's/^/#   /'
}

# peer_col NS ADDR PORT COLUMN : a column of NS's peers row for ADDR PORT
# (by the header's names), 0 without the row or the module; a column the
# header lacks prints "no-column-COLUMN", which no check takes for a count
peer_col()
{
	[ "$HAVE_MODULE" = 1 ] || { echo 0; return; }
	nsx "$1" awk -v a="$2" -v p="$3" -v col="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		c && $1 == a && $2 == p { v = $c }
		END { if (!c) print "no-column-" col; else print v + 0 }' \
		"$TCPTW_PROC/peers"
}
