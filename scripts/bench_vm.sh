#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench_vm.sh KO: runs in the guest (see bench.sh). Short connections
# through client -> server namespaces: server closes first (every
# connection ends in TIME_WAIT and the tw kretprobes fire), and a squeezed
# port range where most connect()s fail with EADDRNOTAVAIL (every failure
# scans 50 TIME_WAIT candidates through the tcp_twsk_unique kretprobe).
# Each workload runs ROUNDS times without and with the module, alternating,
# and the median of each side is compared.
set -uo pipefail

KO=$1
ROUNDS=${ROUNDS:-5}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T=$REPO/selftests/tcptw_traffic

rmmod tcptw 2>/dev/null
ns_up() {
	ip netns add bc && ip netns add bs || return 1
	ip link add v0 netns bc type veth peer name v1 netns bs
	ip -n bc addr add 198.18.9.1/24 dev v0
	ip -n bs addr add 198.18.9.2/24 dev v1
	ip -n bc link set v0 up; ip -n bs link set v1 up
	ip -n bc link set lo up; ip -n bs link set lo up
}
ns_down() { ip netns del bc 2>/dev/null; ip netns del bs 2>/dev/null; }

# one run: prints connects per second (ok + failed) of the client
run() { # $1: workload
	local n=2000 port_range="20000 60000" out
	ns_down; ns_up || return 1
	if [ "$1" = exhaust ]; then
		port_range="20000 20049"
		n=20000
		ip netns exec bc sysctl -qw net.ipv4.tcp_tw_reuse=0
	fi
	ip netns exec bc sysctl -qw net.ipv4.ip_local_port_range="$port_range"
	ip netns exec bs timeout 60 "$T" server --listen 198.18.9.2:80 \
		--count 0 --timeout 50 --ready-file /tmp/bench.ready >/dev/null &
	local srv=$!
	for _ in $(seq 50); do [ -e /tmp/bench.ready ] && break; sleep 0.1; done
	local t0 t1
	t0=$(date +%s%N)
	out=$(ip netns exec bc timeout 60 "$T" client --connect 198.18.9.2:80 \
		--count "$n" --timeout 40 --connect-timeout 2000)
	t1=$(date +%s%N)
	kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; rm -f /tmp/bench.ready
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(round(d["attempts"]*1e9/(int(sys.argv[3])-int(sys.argv[2]))))' "$out" "$t0" "$t1"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "tcptw bench on $(uname -r), $ROUNDS rounds per side, alternating"
printf '%-10s %14s %14s %8s\n' workload "without/s" "with/s" ratio
for w in timewait exhaust; do
	: >/tmp/bench.off; : >/tmp/bench.on
	for _ in $(seq "$ROUNDS"); do
		run "$w" >>/tmp/bench.off
		insmod "$KO" || exit 1
		run "$w" >>/tmp/bench.on
		rmmod tcptw
	done
	off=$(median </tmp/bench.off); on=$(median </tmp/bench.on)
	printf '%-10s %14s %14s %8s\n' "$w" "$off" "$on" \
		"$(python3 -c "print(f'{$on/$off:.3f}')")"
done
ns_down
echo "ratio = with/without connects per second (1.000 = no cost)"
