// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <string.h>

#include "proc.h"
#include "sysctl.h"

static const struct {
	const char *name;
	const char *dotted;
	const char *rel;	/* under the proc root */
	int idx;		/* which of the file's values */
} sysctl_table[SC_NR] = {
	[SC_TCP_TIMESTAMPS] = { "tcp_timestamps", "net.ipv4.tcp_timestamps",
		"sys/net/ipv4/tcp_timestamps", 0 },
	[SC_TCP_TW_REUSE] = { "tcp_tw_reuse", "net.ipv4.tcp_tw_reuse",
		"sys/net/ipv4/tcp_tw_reuse", 0 },
	[SC_TCP_TW_REUSE_DELAY] = { "tcp_tw_reuse_delay",
		"net.ipv4.tcp_tw_reuse_delay",
		"sys/net/ipv4/tcp_tw_reuse_delay", 0 },
	[SC_PORT_RANGE_LO] = { "ip_local_port_range_lo",
		"net.ipv4.ip_local_port_range",
		"sys/net/ipv4/ip_local_port_range", 0 },
	[SC_PORT_RANGE_HI] = { "ip_local_port_range_hi",
		"net.ipv4.ip_local_port_range",
		"sys/net/ipv4/ip_local_port_range", 1 },
	[SC_TCP_MAX_TW_BUCKETS] = { "tcp_max_tw_buckets",
		"net.ipv4.tcp_max_tw_buckets",
		"sys/net/ipv4/tcp_max_tw_buckets", 0 },
	[SC_TCP_RFC1337] = { "tcp_rfc1337", "net.ipv4.tcp_rfc1337",
		"sys/net/ipv4/tcp_rfc1337", 0 },
	[SC_TCP_INVALID_RATELIMIT] = { "tcp_invalid_ratelimit",
		"net.ipv4.tcp_invalid_ratelimit",
		"sys/net/ipv4/tcp_invalid_ratelimit", 0 },
	[SC_SOMAXCONN] = { "somaxconn", "net.core.somaxconn",
		"sys/net/core/somaxconn", 0 },
	[SC_TCP_MAX_SYN_BACKLOG] = { "tcp_max_syn_backlog",
		"net.ipv4.tcp_max_syn_backlog",
		"sys/net/ipv4/tcp_max_syn_backlog", 0 },
	[SC_TCP_SYNCOOKIES] = { "tcp_syncookies", "net.ipv4.tcp_syncookies",
		"sys/net/ipv4/tcp_syncookies", 0 },
	[SC_TCP_KEEPALIVE_TIME] = { "tcp_keepalive_time",
		"net.ipv4.tcp_keepalive_time",
		"sys/net/ipv4/tcp_keepalive_time", 0 },
	[SC_NF_CONNTRACK_MAX] = { "nf_conntrack_max",
		"net.netfilter.nf_conntrack_max",
		"sys/net/netfilter/nf_conntrack_max", 0 },
	[SC_NF_CONNTRACK_COUNT] = { "nf_conntrack_count",
		"net.netfilter.nf_conntrack_count",
		"sys/net/netfilter/nf_conntrack_count", 0 },
	[SC_NF_CT_TCP_TIMEOUT_ESTABLISHED] = {
		"nf_conntrack_tcp_timeout_established",
		"net.netfilter.nf_conntrack_tcp_timeout_established",
		"sys/net/netfilter/nf_conntrack_tcp_timeout_established", 0 },
	[SC_TCP_KEEPALIVE_INTVL] = { "tcp_keepalive_intvl",
		"net.ipv4.tcp_keepalive_intvl",
		"sys/net/ipv4/tcp_keepalive_intvl", 0 },
};

const char *sysctl_name(enum sysctl_id id)
{
	return sysctl_table[id].name;
}

const char *sysctl_dotted(enum sysctl_id id)
{
	return sysctl_table[id].dotted;
}

void sysctls_read(struct sysctls *s)
{
	long long v[4];
	int i, n;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < SC_NR; i++) {
		n = tcptw_read_ints(sysctl_table[i].rel, v, 4);
		if (n > sysctl_table[i].idx) {
			s->v[i] = v[sysctl_table[i].idx];
			s->have[i] = true;
		}
	}
}

long long sysctl_get(const struct sysctls *s, enum sysctl_id id,
		     long long def)
{
	return s->have[id] ? s->v[id] : def;
}

long long sysctl_port_range_size(const struct sysctls *s)
{
	if (!s->have[SC_PORT_RANGE_LO] || !s->have[SC_PORT_RANGE_HI] ||
	    s->v[SC_PORT_RANGE_HI] < s->v[SC_PORT_RANGE_LO])
		return 0;
	return s->v[SC_PORT_RANGE_HI] - s->v[SC_PORT_RANGE_LO] + 1;
}
