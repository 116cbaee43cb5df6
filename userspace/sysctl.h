/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_SYSCTL_H
#define _TCPTW_SYSCTL_H

#include <stdbool.h>

/* The sysctls that decide TIME_WAIT, PAWS, port and queue outcomes. */
enum sysctl_id {
	SC_TCP_TIMESTAMPS,
	SC_TCP_TW_REUSE,
	SC_TCP_TW_REUSE_DELAY,	/* v6.14 */
	SC_PORT_RANGE_LO,	/* ip_local_port_range, first value */
	SC_PORT_RANGE_HI,
	SC_TCP_MAX_TW_BUCKETS,
	SC_TCP_RFC1337,
	SC_TCP_INVALID_RATELIMIT,
	SC_SOMAXCONN,
	SC_TCP_MAX_SYN_BACKLOG,
	SC_TCP_SYNCOOKIES,
	SC_TCP_KEEPALIVE_TIME,
	SC_NF_CONNTRACK_MAX,
	SC_NF_CONNTRACK_COUNT,
	SC_NF_CT_TCP_TIMEOUT_ESTABLISHED,
	SC_TCP_KEEPALIVE_INTVL,	/* since 0.4.0: last, the order is output */
	SC_NR
};

struct sysctls {
	long long v[SC_NR];
	bool have[SC_NR];
};

/* The name printed (the key in JSON, the suffix in Prometheus). */
const char *sysctl_name(enum sysctl_id id);
/* The full dotted name, e.g. net.ipv4.tcp_timestamps. */
const char *sysctl_dotted(enum sysctl_id id);
/* Reads what exists under <proc root>/sys; absent ones have have[] false. */
void sysctls_read(struct sysctls *s);
/* Value or @def when the sysctl is absent. */
long long sysctl_get(const struct sysctls *s, enum sysctl_id id,
		     long long def);
/* Ports in ip_local_port_range, 0 if unknown. */
long long sysctl_port_range_size(const struct sysctls *s);

#endif /* _TCPTW_SYSCTL_H */
