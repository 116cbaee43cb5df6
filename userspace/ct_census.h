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
 * Sources and destinations are each counted in a fixed table of
 * CTC_TOP_SLOTS hash slots holding at most CTC_TOP_CAP endpoints (3/4 of
 * it), so a table of a million sources costs no more than this. While at
 * most CTC_TOP_CAP distinct endpoints were seen, every count is exact
 * (err 0, replaced 0). Beyond that the table is a Space-Saving summary
 * (Metwally, Agrawal, El Abbadi, "Efficient computation of frequent and
 * top-k elements in data streams", ICDT 2005): a new endpoint takes the
 * slot of the one with the fewest entries, inheriting its count + 1 and
 * recording that inherited count as its err. Then:
 *  - an endpoint's true count is in [n - err, n];
 *  - every endpoint with more than total / CTC_TOP_CAP entries is held;
 *    one not held has at most the least n held (ct_census_floor());
 *  - an endpoint with n - err above another's n has more entries than it.
 * The n of a table add up to the entries counted.
 */
#define CTC_TOP_SLOTS 4096
#define CTC_TOP_CAP (CTC_TOP_SLOTS / 4 * 3)

struct ctc_key {
	uint8_t family;		/* AF_INET, AF_INET6 */
	uint8_t proto;		/* destinations: the L4 protocol, else 0 */
	uint16_t port;		/* destinations: the port, else 0 */
	uint8_t addr[16];
};

struct ctc_slot {
	struct ctc_key k;
	uint32_t hpos;		/* its place in ctc_top.heap */
	uint64_t n;		/* entries, at most err over; 0: a free slot */
	uint64_t err;		/* n's maximum overcount (0: n is exact) */
};

struct ctc_top {
	struct ctc_slot *slot;	/* CTC_TOP_SLOTS of them, linear probing */
	uint16_t *heap;		/* used slot indices, a min-heap on n */
	size_t used;
	uint64_t replaced;	/* endpoints that gave up their slot */
	/*
	 * At most this many entries are of endpoints not held (the sum of
	 * err): 0 while the counts are exact.
	 */
	uint64_t untracked;
};

/* Status bits of an entry (uapi nf_conntrack_common.h, IPS_*) */
enum {
	CTC_IPS_SEEN_REPLY = 1 << 1,
	CTC_IPS_ASSURED = 1 << 2,
	CTC_IPS_DYING = 1 << 9,
};

/* One entry as the dump gives it. */
struct ctc_entry {
	uint8_t family, proto;
	bool have_state;
	uint8_t tcp_state;
	uint16_t zone;
	uint8_t src[16], dst[16];
	uint16_t dport;
	uint32_t status;	/* CTC_IPS_* */
	uint32_t mark;
};

/*
 * conntrack(8)'s filters (--family, --proto, --state, --zone, --mark,
 * --src, --dst: the original direction): an entry is counted only if it matches each
 * one given (CTF_* in @set).
 */
enum {
	CTF_FAMILY = 1 << 0, CTF_PROTO = 1 << 1, CTF_STATE = 1 << 2,
	CTF_ZONE = 1 << 3, CTF_MARK = 1 << 4, CTF_SRC = 1 << 5,
	CTF_DST = 1 << 6,
};

struct ctc_filter {
	unsigned int set;
	uint8_t family;		/* AF_INET, AF_INET6 */
	uint8_t proto;
	uint8_t tcp_state;	/* implies TCP */
	uint16_t zone;
	uint32_t mark, mark_mask;
	uint8_t src_family, dst_family;
	uint8_t src[16], dst[16];
};

/* ASSURED, UNREPLIED (no SEEN_REPLY) and DYING entries */
struct ctc_status {
	uint64_t assured, unreplied, dying;
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
	struct ctc_status status, tcp_status[CTC_TCP_STATES];
	/*
	 * Set after ct_census_init(), before ct_census_collect(): only the
	 * entries it matches are counted (total); @dumped counts them all.
	 */
	const struct ctc_filter *filter;
	uint64_t dumped;
};

int ct_census_init(struct ct_census *c);
void ct_census_free(struct ct_census *c);
/* One entry. Never fails: past CTC_TOP_CAP endpoints, counts turn approximate. */
void ct_census_add(struct ct_census *c, const struct ctc_entry *e);
/* The timeout sysctls of the current netns (or proc root). */
void ct_census_timeouts(struct ct_census *c);
/*
 * Up to @max endpoints of @t, largest n first (ties by key), into @out;
 * each n is at most its err above the true count.
 */
size_t ct_census_top(const struct ctc_top *t, const struct ctc_slot **out,
		     size_t max);
/* The most entries an endpoint not held in @t can have (0 if none). */
uint64_t ct_census_floor(const struct ctc_top *t);
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
 * into @c (initialised; c->filter applied if set). -errno (EPERM without
 * CAP_NET_ADMIN).
 */
int ct_census_collect(struct ct_census *c);

/*
 * Each filter as conntrack(8) spells its value (case-insensitive names):
 * false if @arg is not one. --proto: tcp, udp, icmp, icmpv6, ... or 0..255;
 * --state: NONE, SYN_SENT, ..., TIME_WAIT, CLOSE, SYN_SENT2 (LISTEN);
 * --family: ipv4, ipv6; --zone: 0..65535; --mark: N[/MASK] (decimal or 0x);
 * --src, --dst: an IPv4 or IPv6 address.
 */
bool ctc_filter_proto(struct ctc_filter *f, const char *arg);
bool ctc_filter_state(struct ctc_filter *f, const char *arg);
bool ctc_filter_family(struct ctc_filter *f, const char *arg);
bool ctc_filter_zone(struct ctc_filter *f, const char *arg);
bool ctc_filter_mark(struct ctc_filter *f, const char *arg);
bool ctc_filter_addr(struct ctc_filter *f, bool dst, const char *arg);
/* NULL if an entry can match all of @f, else why none can */
const char *ctc_filter_conflict(const struct ctc_filter *f);
bool ctc_filter_match(const struct ctc_filter *f, const struct ctc_entry *e);

/* Sources and destinations print_ct_census() shows (conntrack -n: 1..CAP) */
#define CTC_PRINT_TOP 10
struct out;
/*
 * @c, plain (each line after @ind) and JSON ("census": {"dumped",
 * "matched" (with a filter), "protocols", "tcp_states" (each with its
 * "status"), "zones", "status": {"assured", "unreplied", "dying"},
 * "sources", "destinations", each endpoint with "entries" and
 * "max_overcount"}): tcptw conntrack, and stat's conntrack part.
 */
void print_ct_census(struct out *o, const struct ct_census *c,
		     const char *ind);
/* The same with the @top (1..CTC_TOP_CAP) largest sources and destinations */
void print_ct_census_top(struct out *o, const struct ct_census *c,
			 const char *ind, size_t top);
/*
 * The filters of @f as tcptw spells them: plain "filter --proto tcp ...",
 * JSON "filter": {"family", "proto", "state", "zone", "mark", "mark_mask",
 * "src", "dst"}, those given.
 */
void print_ctc_filter(struct out *o, const struct ctc_filter *f);

#endif /* _TCPTW_CT_CENSUS_H */
