#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# The NAT + server TIME_WAIT topology of the NAT + PAWS tests, sourced by
# every script that needs it (grep -l nat_topo.sh selftests/*.sh):
#
#   c1 198.18.1.2 --eth0---n-c1-- nat 198.18.1.1
#                                      198.18.0.1 --n-srv---eth0-- srv 198.18.0.2:8080
#   c2 198.18.2.2 --eth0---n-c2-- nat 198.18.2.1
#   (IPv6 alike: c1 fd00:1::2, c2 fd00:2::2, nat fd00::1, srv fd00::2)
#
# nat: ip_forward=1, nft `masquerade to :40000` (ONE public port) on n-srv,
# nf_conntrack_tcp_timeout_time_wait=0, tcp_loose=0; srv tcp_early_retrans=0.
# srv has no route back to the clients, everything it sees comes from
# 198.18.0.1:40000.

NAT_PORT=40000
SRV_ADDR=198.18.0.2
SRV_PORT=8080
NAT_PUB=198.18.0.1
SRV_ADDR6=fd00::2
NAT_PUB6=fd00::1

# nat_topo_setup : creates $c1 $c2 $nat $srv. Returns non-zero on failure.
nat_topo_setup()
{
	setup_ns c1 c2 nat srv || return $?

	# one `ip -batch` per namespace: each exec costs under TCG
	ip -b - <<-EOF || return 1
	link add n-c1 netns $nat type veth peer name eth0 netns $c1
	link add n-c2 netns $nat type veth peer name eth0 netns $c2
	link add n-srv netns $nat type veth peer name eth0 netns $srv
	EOF
	ip -n "$c1" -b - <<-EOF || return 1
	addr add 198.18.1.2/24 dev eth0
	link set eth0 up
	route add default via 198.18.1.1
	EOF
	ip -n "$c2" -b - <<-EOF || return 1
	addr add 198.18.2.2/24 dev eth0
	link set eth0 up
	route add default via 198.18.2.1
	EOF
	ip -n "$srv" -b - <<-EOF || return 1
	addr add $SRV_ADDR/24 dev eth0
	link set eth0 up
	EOF
	ip -n "$nat" -b - <<-EOF || return 1
	addr add 198.18.1.1/24 dev n-c1
	addr add 198.18.2.1/24 dev n-c2
	addr add $NAT_PUB/24 dev n-srv
	link set n-c1 up
	link set n-c2 up
	link set n-srv up
	EOF

	# IPv6 the same way: fd00:1::2, fd00:2::2 behind fd00::1:40000
	ip -n "$c1" -b - <<-EOF || return 1
	addr add fd00:1::2/64 dev eth0 nodad
	route add default via fd00:1::1
	EOF
	ip -n "$c2" -b - <<-EOF || return 1
	addr add fd00:2::2/64 dev eth0 nodad
	route add default via fd00:2::1
	EOF
	ip -n "$srv" addr add $SRV_ADDR6/64 dev eth0 nodad || return 1
	ip -n "$nat" -b - <<-EOF || return 1
	addr add fd00:1::1/64 dev n-c1 nodad
	addr add fd00:2::1/64 dev n-c2 nodad
	addr add $NAT_PUB6/64 dev n-srv nodad
	EOF

	ip netns exec "$nat" nft -f - <<EOF || return 1
table ip natpaws {
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "n-srv" meta l4proto tcp masquerade to :$NAT_PORT
	}
}
table ip6 natpaws6 {
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "n-srv" meta l4proto tcp masquerade to :$NAT_PORT
	}
}
EOF
	nsx "$nat" sysctl -qw net.ipv6.conf.all.forwarding=1 || return 1
	# The ruleset autoloaded nf_conntrack; only now do its sysctls exist.
	# tcp_loose=0: no mid-stream pickup. A late duplicate ACK, after the
	# entry's 0 s TIME_WAIT, was otherwise picked up as a new ESTABLISHED
	# flow holding the NAT's only port for days: every later SYN failed
	# to insert.
	nsx "$nat" sysctl -qw net.ipv4.ip_forward=1 \
		net.netfilter.nf_conntrack_tcp_timeout_time_wait=0 \
		net.netfilter.nf_conntrack_tcp_loose=0 || return 1

	# Everything else at its default, spelled out because the recipe
	# depends on it (pitfalls 5 and 6), except tcp_early_retrans=0 (no
	# tail loss probe): on a busy guest srv's FIN was sometimes sent
	# twice (a TLP), and conntrack's state table takes a second FIN from
	# the same side for the other side's: after the client's ACK the
	# entry went to TIME_WAIT, expired at once, and the client's own FIN
	# left the NAT un-NATed; srv never saw it, the client's close
	# barrier timed out and srv kept a FIN_WAIT2 socket on the tuple.
	nsx "$srv" sysctl -qw net.ipv4.tcp_rfc1337=0 net.ipv4.tcp_timestamps=1 \
		net.ipv4.tcp_early_retrans=0

	# Wait until every veth end is operationally up (no ping here: it
	# is not always installed, and srv has no route back for ICMP).
	busywait 3000 link_up "$c1" eth0 && busywait 3000 link_up "$c2" eth0 &&
	busywait 3000 link_up "$srv" eth0 &&
	busywait 3000 link_up "$nat" n-c1 && busywait 3000 link_up "$nat" n-c2 &&
	busywait 3000 link_up "$nat" n-srv
}

nat_topo_cleanup()
{
	cleanup_ns "$c1" "$c2" "$nat" "$srv"
}
