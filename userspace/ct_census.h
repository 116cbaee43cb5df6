/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_CT_CENSUS_H
#define _TCPTW_CT_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What fills the conntrack table: its entries counted by protocol, TCP
 * state and zone, and per source address and per destination (protocol,
 * address, port). Filled one entry at a time from a streaming dump
 * (libnetfilter_conntrack, NFCT_Q_DUMP): nothing is kept per entry, so
 * memory does not grow with the table.
 */

/* The kernel's TCP conntrack states (uapi nf_conntrack_tcp.h), 0..9. */
#define CTC_TCP_STATES 10
#define CTC_TCP_TIME_WAIT 7
#define CTC_TCP_ESTABLISHED 3
#define CTC_ZONES 16

/*
 * Endpoints counted exactly per table (sources, destinations): a power of
 * two; at most 3/4 of it used, entries of further endpoints are counted
 * as "untracked" (said in the output), so a table of a million sources
 * costs no more than this.
 */
#define CTC_TOP_SLOTS 4096

struct ctc_key {
	uint8_t family;		/* AF_INET, AF_INET6 */
	uint8_t proto;		/* destinations: the L4 protocol, else 0 */
	uint16_t port;		/* destinations: the port, else 0 */
	uint8_t addr[16];
};

struct ctc_slot {
	struct ctc_key k;
	uint64_t n;		/* 0: a free slot */
};

struct ctc_top {
	struct ctc_slot *slot;	/* CTC_TOP_SLOTS of them */
	size_t used;
	uint64_t untracked;	/* entries of endpoints beyond the table */
};

/* One entry as the dump gives it. */
struct ctc_entry {
	uint8_t family, proto;
	bool have_state;
	uint8_t tcp_state;
	uint16_t zone;
	uint8_t src[16], dst[16];
	uint16_t dport;
};

struct ct_census {
	uint64_t total;
	uint64_t proto[256];
	uint64_t tcp_state[CTC_TCP_STATES];
	struct {
		uint16_t zone;
		uint64_t n;
	} zone[CTC_ZONES];
	size_t nzones;
	uint64_t zone_other;		/* beyond CTC_ZONES zones */
	struct ctc_top src, dst;
	/* nf_conntrack_tcp_timeout_<state>, seconds; -1 if absent */
	long long timeout[CTC_TCP_STATES];
};

int ct_census_init(struct ct_census *c);
void ct_census_free(struct ct_census *c);
/* One entry. Never fails: an endpoint that does not fit is untracked. */
void ct_census_add(struct ct_census *c, const struct ctc_entry *e);
/* The timeout sysctls of the current netns (or proc root). */
void ct_census_timeouts(struct ct_census *c);
/* Up to @max endpoints of @t, most entries first (ties by key), into @out. */
size_t ct_census_top(const struct ctc_top *t, const struct ctc_slot **out,
		     size_t max);
/* "ESTABLISHED", ...; NULL for a number out of range. */
const char *ct_tcp_state_name(unsigned int st);
/* "nf_conntrack_tcp_timeout_time_wait", ...; NULL for none. */
const char *ct_tcp_state_sysctl(unsigned int st);
/* "tcp", "udp", "icmp", ...; NULL for one without a name here. */
const char *ct_proto_name(unsigned int proto);
/* "198.18.0.1", "[fd00::1]:80" style: the address, with the port if any. */
void ctc_key_str(const struct ctc_key *k, char *buf, size_t len);
bool ctc_key_loopback(const struct ctc_key *k);
/*
 * Dump the current netns's conntrack table through libnetfilter_conntrack
 * into @c (initialised). -errno (EPERM without CAP_NET_ADMIN).
 */
int ct_census_collect(struct ct_census *c);

/* Sources and destinations print_ct_census() shows */
#define CTC_PRINT_TOP 10
struct out;
/*
 * @c, plain (each line after @ind) and JSON ("census": {"dumped",
 * "protocols", "tcp_states", "zones", "sources", "destinations"}): tcptw
 * conntrack, and stat's conntrack part.
 */
void print_ct_census(struct out *o, const struct ct_census *c,
		     const char *ind);

#endif /* _TCPTW_CT_CENSUS_H */
