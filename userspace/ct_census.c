// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * What fills the conntrack table, from a dump of its entries through
 * libnetfilter_conntrack (the statistics stay on libmnl, in ct.c, as
 * conntrack -S does). The library is behind ct_census_collect() alone,
 * so the unit tests wrap nfct_open/nfct_query.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "ct_census.h"
#include "output.h"
#include "proc.h"

/* As the kernel names them (nf_conntrack_proto_tcp.c's tcp_conntrack_names) */
static const char *const tcp_states[CTC_TCP_STATES] = {
	"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT",
	"CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2",
};

static const char *const tcp_sysctls[CTC_TCP_STATES] = {
	NULL,
	"nf_conntrack_tcp_timeout_syn_sent",
	"nf_conntrack_tcp_timeout_syn_recv",
	"nf_conntrack_tcp_timeout_established",
	"nf_conntrack_tcp_timeout_fin_wait",
	"nf_conntrack_tcp_timeout_close_wait",
	"nf_conntrack_tcp_timeout_last_ack",
	"nf_conntrack_tcp_timeout_time_wait",
	"nf_conntrack_tcp_timeout_close",
	NULL,
};

const char *ct_tcp_state_name(unsigned int st)
{
	return st < CTC_TCP_STATES ? tcp_states[st] : NULL;
}

const char *ct_tcp_state_sysctl(unsigned int st)
{
	return st < CTC_TCP_STATES ? tcp_sysctls[st] : NULL;
}

const char *ct_proto_name(unsigned int proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_DCCP:
		return "dccp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_GRE:
		return "gre";
	}
	return NULL;
}

int ct_census_init(struct ct_census *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < CTC_TCP_STATES; i++)
		c->timeout[i] = -1;
	c->src.slot = calloc(CTC_TOP_SLOTS, sizeof(*c->src.slot));
	c->dst.slot = calloc(CTC_TOP_SLOTS, sizeof(*c->dst.slot));
	if (!c->src.slot || !c->dst.slot) {
		ct_census_free(c);
		return -ENOMEM;
	}
	return 0;
}

void ct_census_free(struct ct_census *c)
{
	free(c->src.slot);
	free(c->dst.slot);
	c->src.slot = NULL;
	c->dst.slot = NULL;
}

/* FNV-1a over the key's bytes */
static uint32_t key_hash(const struct ctc_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Linear probing; a full table (3/4 used) counts new keys as untracked. */
static void top_add(struct ctc_top *t, const struct ctc_key *k)
{
	size_t i = key_hash(k) & (CTC_TOP_SLOTS - 1);
	struct ctc_slot *s;

	for (;; i = (i + 1) & (CTC_TOP_SLOTS - 1)) {
		s = &t->slot[i];
		if (!s->n)
			break;
		if (!memcmp(&s->k, k, sizeof(*k))) {
			s->n++;
			return;
		}
	}
	if (t->used >= CTC_TOP_SLOTS / 4 * 3) {
		t->untracked++;
		return;
	}
	s->k = *k;
	s->n = 1;
	t->used++;
}

void ct_census_add(struct ct_census *c, const struct ctc_entry *e)
{
	struct ctc_key k;
	size_t i, alen = e->family == AF_INET6 ? 16 : 4;

	c->total++;
	c->proto[e->proto]++;
	if (e->proto == IPPROTO_TCP && e->have_state &&
	    e->tcp_state < CTC_TCP_STATES)
		c->tcp_state[e->tcp_state]++;
	for (i = 0; i < c->nzones && c->zone[i].zone != e->zone; i++)
		;
	if (i < c->nzones) {
		c->zone[i].n++;
	} else if (i < CTC_ZONES) {
		c->zone[i].zone = e->zone;
		c->zone[i].n = 1;
		c->nzones++;
	} else {
		c->zone_other++;
	}
	/* the key is hashed whole: no padding or stale bytes in it */
	memset(&k, 0, sizeof(k));
	k.family = e->family;
	memcpy(k.addr, e->src, alen);
	top_add(&c->src, &k);
	k.proto = e->proto;
	k.port = e->dport;
	memcpy(k.addr, e->dst, alen);
	top_add(&c->dst, &k);
}

void ct_census_timeouts(struct ct_census *c)
{
	char rel[96];
	long long v;
	size_t i;

	for (i = 0; i < CTC_TCP_STATES; i++) {
		if (!tcp_sysctls[i])
			continue;
		snprintf(rel, sizeof(rel), "sys/net/netfilter/%s",
			 tcp_sysctls[i]);
		if (tcptw_read_ints(rel, &v, 1) == 1)
			c->timeout[i] = v;
	}
}

static int key_cmp(const struct ctc_key *a, const struct ctc_key *b)
{
	return memcmp(a, b, sizeof(*a));
}

size_t ct_census_top(const struct ctc_top *t, const struct ctc_slot **out,
		     size_t max)
{
	size_t i, j, n = 0;

	if (!t->slot)
		return 0;
	/* insertion into the sorted top @max: O(slots * max), max is small */
	for (i = 0; i < CTC_TOP_SLOTS; i++) {
		const struct ctc_slot *s = &t->slot[i];

		if (!s->n)
			continue;
		for (j = n; j > 0 && (out[j - 1]->n < s->n ||
				      (out[j - 1]->n == s->n &&
				       key_cmp(&out[j - 1]->k, &s->k) > 0)); j--)
			if (j < max)
				out[j] = out[j - 1];
		if (j < max) {
			out[j] = s;
			if (n < max)
				n++;
		}
	}
	return n;
}

bool ctc_key_loopback(const struct ctc_key *k)
{
	static const uint8_t v6lo[16] = { [15] = 1 };

	if (k->family == AF_INET)
		return k->addr[0] == 127;
	return k->family == AF_INET6 && !memcmp(k->addr, v6lo, 16);
}

void ctc_key_str(const struct ctc_key *k, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	int af = k->family == AF_INET6 ? AF_INET6 : AF_INET;

	inet_ntop(af, k->addr, a, sizeof(a));
	if (!k->port)
		snprintf(buf, len, "%s", a);
	else if (af == AF_INET6)
		snprintf(buf, len, "[%s]:%u", a, k->port);
	else
		snprintf(buf, len, "%s:%u", a, k->port);
}

/* One entry of the dump: counted, then freed by the library. */
static int dump_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct,
		   void *data)
{
	struct ctc_entry e;
	const void *p;

	(void)type;
	memset(&e, 0, sizeof(e));
	e.family = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	e.proto = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	if (e.proto == IPPROTO_TCP && nfct_attr_is_set(ct, ATTR_TCP_STATE) > 0) {
		e.tcp_state = nfct_get_attr_u8(ct, ATTR_TCP_STATE);
		e.have_state = true;
	}
	if (nfct_attr_is_set(ct, ATTR_ZONE) > 0)
		e.zone = nfct_get_attr_u16(ct, ATTR_ZONE);
	if (e.family == AF_INET6) {
		p = nfct_get_attr(ct, ATTR_ORIG_IPV6_SRC);
		if (p)
			memcpy(e.src, p, 16);
		p = nfct_get_attr(ct, ATTR_ORIG_IPV6_DST);
		if (p)
			memcpy(e.dst, p, 16);
	} else {
		p = nfct_get_attr(ct, ATTR_ORIG_IPV4_SRC);
		if (p)
			memcpy(e.src, p, 4);
		p = nfct_get_attr(ct, ATTR_ORIG_IPV4_DST);
		if (p)
			memcpy(e.dst, p, 4);
	}
	if ((e.proto == IPPROTO_TCP || e.proto == IPPROTO_UDP ||
	     e.proto == IPPROTO_SCTP || e.proto == IPPROTO_DCCP ||
	     e.proto == IPPROTO_UDPLITE) &&
	    nfct_attr_is_set(ct, ATTR_ORIG_PORT_DST) > 0)
		e.dport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST));
	ct_census_add(data, &e);
	return NFCT_CB_CONTINUE;
}

int ct_census_collect(struct ct_census *c)
{
	uint32_t family = AF_UNSPEC;
	struct nfct_handle *h;
	int err = 0;

	errno = 0;
	h = nfct_open(CONNTRACK, 0);
	if (!h)
		return errno ? -errno : -EPROTONOSUPPORT;
	if (nfct_callback_register(h, NFCT_T_ALL, dump_cb, c) < 0) {
		err = errno ? -errno : -EINVAL;
		goto out;
	}
	/* the library reads the dump in chunks, one callback per entry */
	if (nfct_query(h, NFCT_Q_DUMP, &family) < 0)
		err = errno ? -errno : -EIO;
out:
	nfct_close(h);
	ct_census_timeouts(c);
	return err;
}

/*
 * The census as tcptw conntrack prints it, and stat in its conntrack part:
 * plain lines under @ind.
 */
static void print_top(struct out *o, const char *key, const char *title,
		      const struct ctc_top *t, bool dst, const char *ind)
{
	const struct ctc_slot *top[CTC_PRINT_TOP];
	size_t i, n = ct_census_top(t, top, CTC_PRINT_TOP);
	const char *pn;
	char ep[80];

	out_text(o, "%s%s\n", ind, title);
	out_arr_open(o, key);
	for (i = 0; i < n; i++) {
		ctc_key_str(&top[i]->k, ep, sizeof(ep));
		out_obj_open(o, NULL);
		out_text(o, "%s", ind);
		if (dst) {
			pn = ct_proto_name(top[i]->k.proto);
			if (pn)
				out_str(o, "proto", "  %-7s ", pn);
			else
				out_u64(o, "proto", "  %-7llu ", top[i]->k.proto);
			out_str(o, "endpoint", "%-24s", ep);
		} else {
			out_str(o, "endpoint", "  %-32s", ep);
		}
		out_u64(o, "entries", " %12llu\n", top[i]->n);
		out_obj_close(o);
	}
	out_arr_close(o);
	/* more endpoints than the bounded table counts: said, not dropped */
	if (t->untracked)
		out_text(o, "%s", ind);
	out_u64(o, dst ? "untracked_destinations" : "untracked_sources",
		t->untracked ? "  (+%llu entries of endpoints not counted one by one)\n" :
		NULL, t->untracked);
}

void print_ct_census(struct out *o, const struct ct_census *c,
		     const char *ind)
{
	unsigned int i;
	char name[16];
	const char *pn;

	out_obj_open(o, "census");
	out_text(o, "%s", ind);
	out_u64(o, "dumped", "entries dumped %llu\n", c->total);
	out_text(o, "%sby protocol\n", ind);
	out_obj_open(o, "protocols");
	for (i = 0; i < 256; i++) {
		if (!c->proto[i])
			continue;
		pn = ct_proto_name(i);
		if (!pn) {
			snprintf(name, sizeof(name), "%u", i);
			pn = name;
		}
		out_text(o, "%s  %-32s %12llu\n", ind, pn,
			 (unsigned long long)c->proto[i]);
		out_u64(o, pn, NULL, c->proto[i]);
	}
	out_obj_close(o);
	out_text(o, "%stcp by state%-27s timeout\n", ind, "");
	out_obj_open(o, "tcp_states");
	for (i = 0; i < CTC_TCP_STATES; i++) {
		if (!c->tcp_state[i])
			continue;
		out_obj_open(o, ct_tcp_state_name(i));
		out_u64(o, "entries", NULL, c->tcp_state[i]);
		out_text(o, "%s  %-32s %12llu", ind, ct_tcp_state_name(i),
			 (unsigned long long)c->tcp_state[i]);
		if (c->timeout[i] >= 0) {
			out_s64(o, "timeout_s", " %8lld s", c->timeout[i]);
			out_str(o, "sysctl", " (%s)", ct_tcp_state_sysctl(i));
		}
		out_text(o, "\n");
		out_obj_close(o);
	}
	out_obj_close(o);
	out_text(o, "%sby zone\n", ind);
	out_obj_open(o, "zones");
	for (i = 0; i < c->nzones; i++) {
		snprintf(name, sizeof(name), "%u", c->zone[i].zone);
		out_text(o, "%s  %-32s %12llu\n", ind, name,
			 (unsigned long long)c->zone[i].n);
		out_u64(o, name, NULL, c->zone[i].n);
	}
	out_obj_close(o);
	if (c->zone_other) {
		out_text(o, "%s", ind);
		out_u64(o, "zones_other", "  other zones %llu\n", c->zone_other);
	}
	print_top(o, "sources", "top sources", &c->src, false, ind);
	print_top(o, "destinations", "top destinations", &c->dst, true, ind);
	out_obj_close(o);
}
