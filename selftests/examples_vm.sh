#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# examples_vm.sh KO_PATH OUTDIR : for `make examples`, inside the guest:
# real output of every tcptw command, one file per example in OUTDIR
# (docs/examples/), from which docs/tcptw.8 and README.md take their
# examples (scripts/gen-examples.py).
#
#   before insmod         no-module.txt   tcptw diagnose --since 1
#   NAT + PAWS (nat_topo.sh, 41 connections 50 ms apart, server closes
#   first), in srv:
#                         watch.txt       during the run
#                         stat.txt diagnose.txt events.txt export.txt
#   cli 198.18.0.1 --eth0--eth0-- srv 198.18.0.2
#     :8080 ip_local_port_range 50 ports, tcp_tw_reuse=0, 60 connects,
#           client closes first (10 fail), under tcptw run -> run.txt,
#           then peers.txt sockets.txt conntrack.txt (in cli; an nft rule
#           tracks its flows)
#     :8081 backlog 2, never accepts, 8 connects at once, 3 s
#                                   -> listeners.txt (in srv)

ko=${1:?usage: examples_vm.sh KO_PATH OUTDIR}
outdir=${2:?usage: examples_vm.sh KO_PATH OUTDIR}
outdir=$(cd "$outdir" && pwd) || exit 1

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_topo.sh"

CLI=$LIB_DIR/../userspace/tcptw
[ -x "$CLI" ] || { echo "examples: $CLI not built"; exit 1; }
timeout 60 make -s -C "$LIB_DIR" tcptw_traffic || exit 1

# ex FILE NS CAPTION CMD... : run `tcptw CMD...` in NS (""): the guest's
# own netns) from $TMPDIR_T; into FILE: "# CAPTION", "$ tcptw CMD...", the
# output, "# exit status N".
ex()
{
	local file=$outdir/$1 ns=$2; shift 2

	(
		echo "# $1"
		shift
		echo "\$ tcptw $*"
		cd "$TMPDIR_T" || exit 1
		if [ -n "$ns" ]; then
			timeout 60 ip netns exec "$ns" "$CLI" "$@"
		else
			timeout 60 "$CLI" "$@"
		fi
		echo "# exit status $?"
	) >"$file" 2>&1
	echo "examples: ${file##*/}: $(wc -l <"$file") lines, $(tail -n 1 "$file")"
}

ex no-module.txt "" "Without the module: what the kernel alone offers" \
	diagnose --since 1
timeout 60 insmod "$ko" || { echo "examples: insmod $ko failed"; exit 1; }

# --- NAT + PAWS, the server's view
nat_topo_setup || { echo "examples: NAT topology failed"; exit 1; }
server_start "$srv" "$TMPDIR_T/nat.srv.json" --listen $SRV_ADDR:$SRV_PORT \
	--count 41 --timeout 120 || exit 1
ip netns exec "$srv" "$CLI" diagnose --save-baseline "$TMPDIR_T/before" \
	>/dev/null
bg_start "$TMPDIR_T/nat.cli.json" timeout 150 "$TRAFFIC" client \
	--connect $SRV_ADDR:$SRV_PORT --count 41 \
	--netns "$(nspath "$c1"),$(nspath "$c2")" --barrier --timeout 90 \
	--connect-timeout 10000 --gap-ms 50
client_pid=$BG_PID
ex watch.txt "$srv" "NAT + PAWS, in the server's netns, while 41 connections run" \
	watch -i 1 -c 3
bg_wait "$client_pid"
bg_wait "$SERVER_PID"
echo "examples: NAT client: $(cat "$TMPDIR_T/nat.cli.json")"
ex stat.txt "$srv" "NAT + PAWS, in the server's netns, after the run" stat
ex diagnose.txt "$srv" "NAT + PAWS, in the server's netns (tcptw diagnose --save-baseline before, ahead of the run)" \
	diagnose --baseline before
ex events.txt "$srv" "NAT + PAWS, in the server's netns, after the run" events
ex export.txt "$srv" "NAT + PAWS, in the server's netns, after the run" \
	export --prometheus
nat_topo_cleanup

# --- a client that runs out of ports, a listener that never accepts
setup_ns cli srv || exit 1
veth_pair "$cli" "$srv" eth0 198.18.0.1/24 198.18.0.2/24 || exit 1
nsx "$cli" sysctl -qw net.ipv4.ip_local_port_range="20000 20049" \
	net.ipv4.tcp_tw_reuse=0
busywait 3000 link_up "$cli" eth0 && busywait 3000 link_up "$srv" eth0 ||
	exit 1
# conntrack in cli, as a host with a stateful firewall has it
printf '%s\n' "table inet trk {" "chain out {" \
	"type filter hook output priority 0; policy accept;" \
	"ct state new counter" "}" "}" | nsx "$cli" nft -f - || exit 1
server_start "$srv" "$TMPDIR_T/pe.srv.json" --listen 198.18.0.2:8080 \
	--count 0 --timeout 60 --close-first client || exit 1
pe_pid=$SERVER_PID
# the load tool under tcptw run, by a name without this machine's path
cp "$TRAFFIC" "$TMPDIR_T/tcptw_traffic" || exit 1
ex run.txt "$cli" "A client with 50 ephemeral ports and tcp_tw_reuse=0: the load tool (60 connects, the client closes first) under tcptw run, in its netns; the tool's one-line summary, then the report" \
	run -- ./tcptw_traffic client --connect 198.18.0.2:8080 --count 60 \
	--close-first client --barrier --timeout 40
server_start "$srv" "$TMPDIR_T/lq.srv.json" --listen 198.18.0.2:8081 \
	--no-accept --backlog 2 --timeout 60 || exit 1
timeout 60 ip netns exec "$cli" /usr/bin/python3 "$LIB_DIR/tcptw_sock.py" \
	burst 198.18.0.2 8081 8 10 3 >"$TMPDIR_T/lq.cli.json"
echo "examples: listen overflow client: $(cat "$TMPDIR_T/lq.cli.json")"
ex peers.txt "$cli" "A client with 50 ephemeral ports and tcp_tw_reuse=0 after 60 connects, in its netns" peers
ex sockets.txt "$cli" "The same client, in its netns" sockets
ex conntrack.txt "$cli" "The same client, whose nft ruleset tracks its flows, in its netns" \
	conntrack
ex listeners.txt "$srv" "A listener with backlog 2 that never accepts, after 8 connects, in the server's netns" \
	listeners
kill "$pe_pid" "$SERVER_PID" 2>/dev/null
cleanup_all_ns

timeout 60 rmmod tcptw
echo "examples: kernel $(uname -r), written to $outdir"
