#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# packetdrill_vm.sh TCPTW_KO [SCRIPT_DIR...]   (in a test guest, as root;
# `make packetdrill` boots one and runs it)
#
# The kernel's own TCP tests with tcptw loaded: every packetdrill script
# under SCRIPT_DIR (default: packetdrill's gtests/net/tcp, the kernel's
# tools/testing/selftests/net/packetdrill that scripts/packetdrill.sh
# fetched into .cache/packetdrill/, and selftests/packetdrill/: tcptw's
# own, for the server TIME_WAIT decisions) runs in a fresh network namespace,
# once without tcptw and once with it, in the same boot. Asserted:
#  - each script passes or fails the same way with tcptw as without it
#    (the module changes nothing). A script whose result differs is run
#    again both ways, twice: it is a failure of this lane when it passed
#    all three times one way and failed all three the other way for a
#    reason other than time (packetdrill's "timing error", a packet it timed out
#    waiting for, or an outbound TSval off the script's clock by more
#    than the tolerance: a TCG guest misses a script's windows now and then,
#    with tcptw or without); else it is reported as timing;
#  - no kernel report (BUG, WARNING, Oops, KASAN, lockdep) in dmesg;
#  - in every script's namespace, each counter tcptw reads from a MIB
#    equals that MIB, and ListenOverflowSyn + ListenOverflowAck equals
#    ListenOverflows (rows that add up);
#  - selftests/packetdrill.expect: for the scripts that reach a TIME_WAIT,
#    PAWS, reuse or listener decision, the counters and peers columns the
#    script's packets make (one line per script, worked out from its
#    packets; a name not listed is expected 0 for those counters).
# IPv4 for every script (PD_FAMS="ipv4 ipv6" for both); addresses from
# 198.18.0.0/15 and fd00::/8 (scripts that name other addresses in
# themselves are skipped, with their name). PD_FILTER=REGEX runs only the
# scripts whose path matches; PD_VERBOSE=1 shows how each failing script
# failed. Prints TAP; exit 0 iff nothing failed.
set -u

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PDC=${TCPTW_CACHE:-$REPO/.cache}/packetdrill
PD=$PDC/src/gtests/net/packetdrill/packetdrill
KO=${1:?usage: packetdrill_vm.sh TCPTW_KO [SCRIPT_DIR...]}
shift
EXPECT=$REPO/selftests/packetdrill.expect
PD_FAMS=${PD_FAMS:-ipv4}
PD_FILTER=${PD_FILTER:-.}
PD_TIMEOUT=${PD_TIMEOUT:-120}
OUT=$(mktemp -d /tmp/packetdrill.XXXXXX)
export NSTAT_HISTORY=$OUT/nstat.history

[ -x "$PD" ] || { echo "Bail out! no packetdrill at $PD (make packetdrill builds it)"; exit 1; }
[ -r "$KO" ] || { echo "Bail out! no module at $KO"; exit 1; }
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
	dirs=("$PDC/src/gtests/net/tcp")
	for d in "$PDC"/kernel-*/; do
		[ -d "$d" ] && dirs+=("${d%/}")
	done
	# and tcptw's own: the TIME_WAIT decisions neither suite reaches
	dirs+=("$REPO/selftests/packetdrill")
fi

args_ipv4=(--ip_version=ipv4 --local_ip=198.18.0.1 --gateway_ip=198.18.0.1
	--netmask_ip=255.255.0.0 --remote_ip=198.19.0.1
	-D TFO_COOKIE=3021b9d889017eeb -D CODE=host_unreachable
	-D CMSG_LEVEL_IP=SOL_IP -D CMSG_TYPE_RECVERR=IP_RECVERR)
# the gateway in the local address' /48 (packetdrill's fixed IPv6 prefix)
args_ipv6=(--ip_version=ipv6 --mtu=1520 --local_ip=fd00:d::1
	--gateway_ip=fd00:d:0:8888::1 --remote_ip=fd00:e::1
	-D TFO_COOKIE=3021b9d889017eeb -D CODE=host_unreachable
	-D CMSG_LEVEL_IP=SOL_IPV6 -D CMSG_TYPE_RECVERR=IPV6_RECVERR)
# a TCG guest is a slow machine: the kernel's runner's tolerance there;
# tcptw's own scripts test decisions, not time: half a second
tolerance=(--tolerance_usecs=14000)
tolerance_own=(--tolerance_usecs=500000)

# the counters tcptw reads from a MIB, and the MIB (nstat's names)
MIB_EQUAL="TwOverflow:TcpExtTCPTimeWaitOverflow TwReuseGranted:TcpExtTWRecycled
ListenOverflow:TcpExtListenOverflows ListenSynDrop:TcpExtTCPReqQFullDrop
ListenSynCookieSent:TcpExtSyncookiesSent PawsActiveRejected:TcpExtPAWSActive
RstSent:TcpOutRsts"
kv=$(uname -r | awk -F. '{ print $1 * 256 + $2 }')
# 6.16+ counts TIME_WAIT's PAWS rejects apart
[ "$kv" -ge $((6 * 256 + 16)) ] &&
	MIB_EQUAL="$MIB_EQUAL TwPawsRejected:TcpExtPAWSTimewait"
# 6.1+ counts TcpExt TW (+ TWKilled) at a TIME_WAIT socket's birth: that
# sum is TwCreated there (below)

# what packetdrill says when a run failed on time, not on behaviour
TIMING_RE='timing error|Timed out waiting for packet|bad outbound TCP timestamp value'

n=0 failed=0 flaky=0 skipped=0
tap() { n=$((n + 1)); echo "$1 $n - $2${3:+ # $3}"; }

# run_one SCRIPT FAM TAG : one run in a fresh netns; prints pass or fail;
# with tcptw loaded, leaves the netns' counters, peers and MIBs in
# $OUT/TAG.{counters,peers,listeners,nstat}, its output in $OUT/TAG.log
run_one()
{
	local script=$1 fam=$2 tag=$3 ns=pd$$ rc a
	local -n fargs=args_$fam
	local tn=tolerance

	case $script in
	"$REPO"/selftests/packetdrill/*) tn=tolerance_own ;;
	esac
	local -n tol=$tn

	ip netns add $ns || return 1
	ip -n $ns link set lo up
	(cd "$(dirname "$script")" &&
	 timeout "$PD_TIMEOUT" ip netns exec $ns "$PD" --send_omit_free \
		"${fargs[@]}" "${tol[@]}" "$(basename "$script")" \
		>"$OUT/$tag.log" 2>&1)
	rc=$?
	if [ -d /proc/net/tcptw ] || ip netns exec $ns test -d /proc/net/tcptw; then
		ip netns exec $ns cat /proc/net/tcptw/counters >"$OUT/$tag.counters" 2>/dev/null
		ip netns exec $ns cat /proc/net/tcptw/peers >"$OUT/$tag.peers" 2>/dev/null
		ip netns exec $ns cat /proc/net/tcptw/listeners >"$OUT/$tag.listeners" 2>/dev/null
		ip netns exec $ns nstat -asz >"$OUT/$tag.nstat" 2>/dev/null
	fi
	ip netns del $ns
	a=fail
	[ $rc = 0 ] && a=pass
	echo $a
}

# value FILE NAME : NAME's value in a counters or nstat file, 0 if none
value()
{
	awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' "$1" 2>/dev/null
}

# peer_sum FILE COLUMN : COLUMN summed over a peers or listeners file's rows
peer_sum()
{
	awk -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		c { s += $c } END { print s + 0 }' "$1" 2>/dev/null
}

# check_counters TAG NAME : MIB-equal counters and the expectation line
check_counters()
{
	local tag=$1 name=$2 pair c m vc vm bad="" line kv_ k want got

	[ -s "$OUT/$tag.counters" ] || { echo "no counters read"; return 1; }
	for pair in $MIB_EQUAL; do
		c=${pair%%:*} m=${pair#*:}
		vc=$(value "$OUT/$tag.counters" "$c")
		vm=$(value "$OUT/$tag.nstat" "$m")
		[ "$vc" = "$vm" ] || bad="$bad $c=$vc!=$m=$vm"
	done
	vc=$(( $(value "$OUT/$tag.counters" ListenOverflowSyn) +
	       $(value "$OUT/$tag.counters" ListenOverflowAck) ))
	vm=$(value "$OUT/$tag.nstat" TcpExtListenOverflows)
	[ "$vc" = "$vm" ] || bad="$bad ListenOverflowSyn+Ack=$vc!=ListenOverflows=$vm"
	if [ "$kv" -ge $((6 * 256 + 1)) ]; then
		vc=$(value "$OUT/$tag.counters" TwCreated)
		vm=$(( $(value "$OUT/$tag.nstat" TcpExtTW) +
		       $(value "$OUT/$tag.nstat" TcpExtTWKilled) ))
		[ "$vc" = "$vm" ] || bad="$bad TwCreated=$vc!=TW+TWKilled=$vm"
	fi
	# the expectation line, if any: NAME COUNTER=N ... peers.COLUMN=N
	# listeners.COLUMN=N (a column summed over the file's rows)
	line=$(awk -v s="$name" '$1 == s' "$EXPECT" 2>/dev/null)
	if [ -n "$line" ]; then
		EXPECTED=$((EXPECTED + 1))
		for kv_ in ${line#* }; do
			k=${kv_%%=*} want=${kv_#*=}
			case $k in
			peers.*) got=$(peer_sum "$OUT/$tag.peers" "${k#peers.}") ;;
			listeners.*) got=$(peer_sum "$OUT/$tag.listeners" "${k#listeners.}") ;;
			*) got=$(value "$OUT/$tag.counters" "$k") ;;
			esac
			[ "$got" = "$want" ] || bad="$bad $k=$got(want $want)"
		done
	fi
	[ -z "$bad" ] && return 0
	echo "${bad# }"
	return 1
}

# every script, in a stable order
mapfile -t scripts < <(for d in "${dirs[@]}"; do find "$d" -name '*.pkt'; done |
	grep -E -- "$PD_FILTER" | sort)
echo "TAP version 13"
echo "1..$(( ${#scripts[@]} * $(wc -w <<<"$PD_FAMS") + 2 ))"
echo "# kernel $(uname -r), packetdrill $(grep -o 'commit [0-9a-f]*' "$PDC/src/ORIGIN" 2>/dev/null)"
# packetdrill's device
modprobe tun 2>/dev/null
t0=$SECONDS

# 1. without tcptw
rmmod tcptw 2>/dev/null
declare -A WITHOUT=() WITH=() WOTAG=()
nwo=0
for s in "${scripts[@]}"; do
	if grep -qE '192\.168\.|192\.0\.2\.|10\.0\.0\.|fd3d:' "$s"; then
		continue
	fi
	for f in $PD_FAMS; do
		nwo=$((nwo + 1))
		WOTAG[$s:$f]=wo.$nwo
		WITHOUT[$s:$f]=$(run_one "$s" "$f" "${WOTAG[$s:$f]}")
	done
done
t1=$SECONDS
echo "# without tcptw: $((t1 - t0)) s"

# 2. with tcptw, in the same boot
dmesg_mark=$(dmesg | wc -l)
if ! insmod "$KO"; then
	echo "Bail out! insmod $KO failed"
	exit 1
fi
EXPECTED=0
pass_wo=0 pass_w=0
for s in "${scripts[@]}"; do
	name=${s#"$PDC"/}
	name=${name#src/gtests/net/}
	name=${name#"$REPO"/selftests/}
	if grep -qE '192\.168\.|192\.0\.2\.|10\.0\.0\.|fd3d:' "$s"; then
		for f in $PD_FAMS; do
			skipped=$((skipped + 1))
			tap ok "$name ($f)" "SKIP names addresses outside 198.18.0.0/15 and fd00::/8"
		done
		continue
	fi
	for f in $PD_FAMS; do
		tag=with.$n
		r=$(run_one "$s" "$f" "$tag")
		WITH[$s:$f]=$r
		wo=${WITHOUT[$s:$f]}
		[ "$wo" = pass ] && pass_wo=$((pass_wo + 1))
		[ "$r" = pass ] && pass_w=$((pass_w + 1))
		why=""
		if [ "$r" != "$wo" ]; then
			# twice more each way; a run that failed on a packet's or
			# a call's time under TCG (packetdrill says "timing
			# error", timed out waiting for a packet, or found a
			# TSval, a clock reading, beyond its tolerance under
			# --tcp_ts_tick_usecs) is no difference tcptw made
			rmmod tcptw
			a=$(run_one "$s" "$f" again.wo1) b=$(run_one "$s" "$f" again.wo2)
			insmod "$KO"
			c=$(run_one "$s" "$f" again.w1) d=$(run_one "$s" "$f" again.w2)
			# the failed runs' logs that name another reason
			other=$(for l in "$OUT/${WOTAG[$s:$f]}.log" "$OUT/$tag.log" \
					"$OUT"/again.*.log; do
				grep -q -E 'error|fail' "$l" 2>/dev/null || continue
				grep -q -E "$TIMING_RE" "$l" ||
					echo "$l"
			done)
			# tcptw's difference: 3 of 3 one way, 0 of 3 the other,
			# for a reason other than time. A script that passed
			# some runs each way is the guest's (its timers fire
			# late under load: a retransmission the script did not
			# expect is no "timing error"); its reason is shown.
			if [ -z "$other" ] ||
			   { [ "$wo$a$b" != passpasspass ] && [ "$r$c$d" != passpasspass ]; } ||
			   { [ "$wo$a$b" != failfailfail ] && [ "$r$c$d" != failfailfail ]; }; then
				flaky=$((flaky + 1))
				echo "# $name ($f): timing under TCG: without $wo $a $b, with $r $c $d"
				for l in $other; do
					grep -m 1 -E 'error|fail' "$l" | sed 's/^/#   | /'
				done
			elif [ "$wo$a$b" = passpasspass ]; then
				why="passes without tcptw (3 of 3), not with it: $r $c $d"
			else
				why="passes with tcptw (3 of 3), not without it: $wo $a $b"
			fi
			# the counters of a run with tcptw that got through the
			# script (a run stopped half-way by the guest's time made
			# only half the script's packets)
			if [ -z "$why" ] && [ "$r" != pass ] && [ "$wo" = pass ]; then
				for t in again.w1:$c again.w2:$d; do
					[ "${t#*:}" = pass ] || continue
					for x in counters peers listeners nstat; do
						cp "$OUT/${t%%:*}.$x" "$OUT/$tag.$x" 2>/dev/null
					done
					break
				done
			fi
			rm -f "$OUT"/again.*
		fi
		if [ -z "$why" ]; then
			check_counters "$tag" "$name" >"$OUT/why"
			why=$(cat "$OUT/why")
		fi
		if [ -z "$why" ]; then
			tap ok "$name ($f): $r without and with tcptw, counters == MIBs"
			# what tcptw counted (for the expectation lines)
			c=$(awk '$2 != 0 { printf "%s=%s ", $1, $2 }' "$OUT/$tag.counters")
			[ -n "$c" ] && echo "#   tcptw: $c"
			[ "$r" = fail ] && [ "${PD_VERBOSE:-0}" = 1 ] &&
				grep -v '^sysctl:' "$OUT/$tag.log" | head -n 3 | sed 's/^/#   | /'
			rm -f "$OUT/$tag".* "$OUT/${WOTAG[$s:$f]}".*
			continue
		fi
		failed=$((failed + 1))
		tap "not ok" "$name ($f): $why"
		sed 's/^/#   /' "$OUT/$tag.log" | tail -n 5
	done
done
t2=$SECONDS
echo "# with tcptw: $((t2 - t1)) s"

reports=$(dmesg | tail -n +"$((dmesg_mark + 1))" |
	grep -E 'BUG:|WARNING:|Oops|KASAN|possible recursive locking|circular locking|cut here')
if [ -z "$reports" ]; then
	tap ok "no kernel report while the scripts ran with tcptw"
else
	failed=$((failed + 1))
	tap "not ok" "kernel reports while the scripts ran with tcptw"
	echo "$reports" | head -n 40 | sed 's/^/#   /'
fi
missing=$(awk '!/^#/ && NF { print $1 }' "$EXPECT" | while read -r e; do
	printf '%s\n' "${scripts[@]}" | grep -qF "/$e" || echo "$e"; done)
if [ -z "$missing" ] || [ "$PD_FILTER" != . ]; then
	tap ok "every expectation line names a script that ran"
else
	failed=$((failed + 1))
	tap "not ok" "expectation lines for scripts not found: $(echo "$missing" | tr '\n' ' ')"
fi
rmmod tcptw
total=$(( ${#scripts[@]} * $(wc -w <<<"$PD_FAMS") ))
echo "# scripts: ${#scripts[@]} ($PD_FAMS), runs $total, skipped $skipped; passed without tcptw $pass_wo, with $pass_w; timing $flaky; expectation lines checked $EXPECTED; $((t2 - t0)) s"
echo "# $((n - failed)) passed, $failed failed, $skipped skipped"
rm -rf "$OUT"
[ $failed = 0 ]
