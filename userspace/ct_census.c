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
	c->src.heap = calloc(CTC_TOP_CAP, sizeof(*c->src.heap));
	c->dst.heap = calloc(CTC_TOP_CAP, sizeof(*c->dst.heap));
	if (!c->src.slot || !c->dst.slot || !c->src.heap || !c->dst.heap) {
		ct_census_free(c);
		return -ENOMEM;
	}
	return 0;
}

void ct_census_free(struct ct_census *c)
{
	free(c->src.slot);
	free(c->dst.slot);
	free(c->src.heap);
	free(c->dst.heap);
	c->src.slot = NULL;
	c->dst.slot = NULL;
	c->src.heap = NULL;
	c->dst.heap = NULL;
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

#define SLOT_MASK (CTC_TOP_SLOTS - 1)

/* Heap place @i now holds slot @si */
static void heap_set(struct ctc_top *t, size_t i, size_t si)
{
	t->heap[i] = si;
	t->slot[si].hpos = i;
}

/* A slot's n only grows: it can only sink (the root is the least n). */
static void heap_down(struct ctc_top *t, size_t i)
{
	size_t c, si = t->heap[i];
	uint64_t n = t->slot[si].n;

	for (; (c = 2 * i + 1) < t->used; i = c) {
		if (c + 1 < t->used &&
		    t->slot[t->heap[c + 1]].n < t->slot[t->heap[c]].n)
			c++;
		if (t->slot[t->heap[c]].n >= n)
			break;
		heap_set(t, i, t->heap[c]);
	}
	heap_set(t, i, si);
}

static void heap_up(struct ctc_top *t, size_t i)
{
	size_t p, si = t->heap[i];
	uint64_t n = t->slot[si].n;

	for (; i > 0; i = p) {
		p = (i - 1) / 2;
		if (t->slot[t->heap[p]].n <= n)
			break;
		heap_set(t, i, t->heap[p]);
	}
	heap_set(t, i, si);
}

/* The slot of @k, or the free slot that ends its probe sequence. */
static size_t slot_find(const struct ctc_top *t, const struct ctc_key *k)
{
	size_t i = key_hash(k) & SLOT_MASK;

	while (t->slot[i].n && memcmp(&t->slot[i].k, k, sizeof(*k)))
		i = (i + 1) & SLOT_MASK;
	return i;
}

/*
 * Free slot @i, shifting back the slots after it that probed past it
 * (Knuth's algorithm R), so lookups still find them; the heap follows.
 */
static void slot_del(struct ctc_top *t, size_t i)
{
	size_t h, j = i;

	for (;;) {
		j = (j + 1) & SLOT_MASK;
		if (!t->slot[j].n)
			break;
		h = key_hash(&t->slot[j].k) & SLOT_MASK;
		/* stays if its home is cyclically in (i, j] */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		t->slot[i] = t->slot[j];
		t->heap[t->slot[i].hpos] = i;
		i = j;
	}
	t->slot[i].n = 0;
}

/*
 * Space-Saving (see ct_census.h): counted exactly until CTC_TOP_CAP
 * endpoints are held, then a new one replaces the one with the fewest
 * entries (the heap's root), inheriting its count as err. O(log CAP).
 */
static void top_add(struct ctc_top *t, const struct ctc_key *k)
{
	size_t i = slot_find(t, k), root;
	struct ctc_slot *s = &t->slot[i];
	uint64_t min;

	if (s->n) {
		s->n++;
		heap_down(t, s->hpos);
		return;
	}
	if (t->used < CTC_TOP_CAP) {
		s->k = *k;
		s->n = 1;
		s->err = 0;
		t->heap[t->used] = i;
		s->hpos = t->used++;
		heap_up(t, s->hpos);
		return;
	}
	root = t->heap[0];
	min = t->slot[root].n;
	t->untracked += min - t->slot[root].err;
	t->replaced++;
	slot_del(t, root);
	/* the shift may have freed a slot earlier in @k's probe sequence */
	i = slot_find(t, k);
	s = &t->slot[i];
	s->k = *k;
	s->n = min + 1;
	s->err = min;
	heap_set(t, 0, i);
	heap_down(t, 0);
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

uint64_t ct_census_floor(const struct ctc_top *t)
{
	return t->replaced && t->used ? t->slot[t->heap[0]].n : 0;
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
		out_u64(o, "entries", " %12llu", top[i]->n);
		out_u64(o, "max_overcount", top[i]->err ?
			"  (at most %llu over)" : NULL, top[i]->err);
		out_text(o, "\n");
		out_obj_close(o);
	}
	out_arr_close(o);
	/* more endpoints than the bounded table holds: said, not hidden */
	if (t->replaced) {
		out_text(o, "%s  (approximate past %u endpoints: ", ind,
			 CTC_TOP_CAP);
		out_text(o, "each count at most its overcount above the true one; ");
		out_text(o, "one not listed has at most %llu entries; ",
			 (unsigned long long)ct_census_floor(t));
		out_text(o, "at most %llu entries are of ones not held)\n",
			 (unsigned long long)t->untracked);
	}
	out_u64(o, dst ? "untracked_destinations" : "untracked_sources", NULL,
		t->untracked);
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
