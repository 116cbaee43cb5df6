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
#include <strings.h>
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

static void status_add(struct ctc_status *s, uint32_t status)
{
	s->assured += !!(status & CTC_IPS_ASSURED);
	s->unreplied += !(status & CTC_IPS_SEEN_REPLY);
	s->dying += !!(status & CTC_IPS_DYING);
}

void ct_census_add(struct ct_census *c, const struct ctc_entry *e)
{
	struct ctc_key k;
	size_t i, alen = e->family == AF_INET6 ? 16 : 4;

	c->total++;
	c->proto[e->proto]++;
	status_add(&c->status, e->status);
	if (e->proto == IPPROTO_TCP && e->have_state &&
	    e->tcp_state < CTC_TCP_STATES) {
		c->tcp_state[e->tcp_state]++;
		status_add(&c->tcp_status[e->tcp_state], e->status);
	}
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

/* The names of ct_proto_name(), and /etc/protocols' for ICMPv6 */
bool ctc_filter_proto(struct ctc_filter *f, const char *arg)
{
	unsigned long v;
	const char *pn;
	char *end;

	for (v = 0; v < 256; v++) {
		pn = ct_proto_name(v);
		if (pn && !strcasecmp(arg, pn))
			break;
	}
	if (v == 256 && !strcasecmp(arg, "ipv6-icmp"))
		v = IPPROTO_ICMPV6;
	if (v == 256) {
		if (*arg < '0' || *arg > '9')
			return false;
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || v > 255)
			return false;
	}
	f->proto = v;
	f->set |= CTF_PROTO;
	return true;
}

bool ctc_filter_state(struct ctc_filter *f, const char *arg)
{
	unsigned int i;

	for (i = 0; i < CTC_TCP_STATES; i++)
		if (!strcasecmp(arg, tcp_states[i]))
			break;
	/* conntrack-tools' name of SYN_SENT2 */
	if (i == CTC_TCP_STATES && !strcasecmp(arg, "LISTEN"))
		i = 9;
	if (i == CTC_TCP_STATES)
		return false;
	f->tcp_state = i;
	f->set |= CTF_STATE;
	return true;
}

bool ctc_filter_family(struct ctc_filter *f, const char *arg)
{
	if (!strcasecmp(arg, "ipv4"))
		f->family = AF_INET;
	else if (!strcasecmp(arg, "ipv6"))
		f->family = AF_INET6;
	else
		return false;
	f->set |= CTF_FAMILY;
	return true;
}

/* A number up to @max: decimal, or hex after 0x (@hex); no sign, no space */
static bool parse_u32(const char *s, bool hex, uint32_t max, uint32_t *v)
{
	unsigned long long n;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoull(s, &end, hex ? 0 : 10);
	if (errno || end == s || *end || n > max)
		return false;
	*v = n;
	return true;
}

bool ctc_filter_zone(struct ctc_filter *f, const char *arg)
{
	uint32_t v;

	if (!parse_u32(arg, false, 65535, &v))
		return false;
	f->zone = v;
	f->set |= CTF_ZONE;
	return true;
}

bool ctc_filter_mark(struct ctc_filter *f, const char *arg)
{
	const char *slash = strchr(arg, '/');
	uint32_t mark, mask = UINT32_MAX;
	char num[32];

	if (slash) {
		if ((size_t)(slash - arg) >= sizeof(num) ||
		    !parse_u32(slash + 1, true, UINT32_MAX, &mask))
			return false;
		memcpy(num, arg, slash - arg);
		num[slash - arg] = '\0';
		arg = num;
	}
	if (!parse_u32(arg, true, UINT32_MAX, &mark))
		return false;
	f->mark = mark;
	f->mark_mask = mask;
	f->set |= CTF_MARK;
	return true;
}

bool ctc_filter_addr(struct ctc_filter *f, bool dst, const char *arg)
{
	uint8_t a[16] = { 0 };
	uint8_t af;

	if (inet_pton(AF_INET, arg, a) == 1)
		af = AF_INET;
	else if (inet_pton(AF_INET6, arg, a) == 1)
		af = AF_INET6;
	else
		return false;
	if (dst) {
		memcpy(f->dst, a, sizeof(a));
		f->dst_family = af;
		f->set |= CTF_DST;
	} else {
		memcpy(f->src, a, sizeof(a));
		f->src_family = af;
		f->set |= CTF_SRC;
	}
	return true;
}

const char *ctc_filter_conflict(const struct ctc_filter *f)
{
	uint8_t fam = f->set & CTF_FAMILY ? f->family : 0;

	if ((f->set & CTF_STATE) && (f->set & CTF_PROTO) &&
	    f->proto != IPPROTO_TCP)
		return "--state is a TCP state: --proto must be tcp";
	if ((f->set & CTF_SRC) && fam && f->src_family != fam)
		return "--src is not of the --family given";
	if ((f->set & CTF_DST) && fam && f->dst_family != fam)
		return "--dst is not of the --family given";
	if ((f->set & CTF_SRC) && (f->set & CTF_DST) &&
	    f->src_family != f->dst_family)
		return "--src and --dst are of different families";
	return NULL;
}

bool ctc_filter_match(const struct ctc_filter *f, const struct ctc_entry *e)
{
	size_t alen = e->family == AF_INET6 ? 16 : 4;

	if ((f->set & CTF_FAMILY) && e->family != f->family)
		return false;
	if ((f->set & CTF_PROTO) && e->proto != f->proto)
		return false;
	if ((f->set & CTF_STATE) &&
	    (e->proto != IPPROTO_TCP || !e->have_state ||
	     e->tcp_state != f->tcp_state))
		return false;
	if ((f->set & CTF_ZONE) && e->zone != f->zone)
		return false;
	if ((f->set & CTF_MARK) &&
	    (e->mark & f->mark_mask) != (f->mark & f->mark_mask))
		return false;
	if ((f->set & CTF_SRC) && (e->family != f->src_family ||
				   memcmp(e->src, f->src, alen)))
		return false;
	if ((f->set & CTF_DST) && (e->family != f->dst_family ||
				   memcmp(e->dst, f->dst, alen)))
		return false;
	return true;
}

/* One entry of the dump: counted, then freed by the library. */
static int dump_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct,
		   void *data)
{
	struct ct_census *c = data;
	struct ctc_entry e;
	const void *p;
	uint32_t st;

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
	/* the kernel always sends the status; the mark only when not 0 */
	st = nfct_get_attr_u32(ct, ATTR_STATUS);
	e.status = (st & IPS_SEEN_REPLY ? CTC_IPS_SEEN_REPLY : 0) |
		   (st & IPS_ASSURED ? CTC_IPS_ASSURED : 0) |
		   (st & IPS_DYING ? CTC_IPS_DYING : 0);
	if (nfct_attr_is_set(ct, ATTR_MARK) > 0)
		e.mark = nfct_get_attr_u32(ct, ATTR_MARK);
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
	c->dumped++;
	if (!c->filter || ctc_filter_match(c->filter, &e))
		ct_census_add(c, &e);
	return NFCT_CB_CONTINUE;
}

int ct_census_collect(struct ct_census *c)
{
	uint32_t family = AF_UNSPEC;
	struct nfct_handle *h;
	int err = 0;

	/* the kernel dumps one family alone when asked (ctnetlink's l3num) */
	if (c->filter && (c->filter->set & CTF_FAMILY))
		family = c->filter->family;

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
		      const struct ctc_top *t, bool dst, const char *ind,
		      size_t max)
{
	const struct ctc_slot **top = calloc(max, sizeof(*top));
	size_t i, n = top ? ct_census_top(t, top, max) : 0;
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
	free(top);
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

static void print_status(struct out *o, const struct ctc_status *s)
{
	out_u64(o, "assured", NULL, s->assured);
	out_u64(o, "unreplied", NULL, s->unreplied);
	out_u64(o, "dying", NULL, s->dying);
}

void print_ct_census_top(struct out *o, const struct ct_census *c,
			 const char *ind, size_t top)
{
	unsigned int i;
	char name[16];
	const char *pn;

	out_obj_open(o, "census");
	out_text(o, "%s", ind);
	if (c->filter) {
		out_u64(o, "dumped", "entries dumped %llu", c->dumped);
		out_u64(o, "matched", ", %llu match the filter\n", c->total);
	} else {
		out_u64(o, "dumped", "entries dumped %llu\n", c->total);
	}
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
		out_obj_open(o, "status");
		print_status(o, &c->tcp_status[i]);
		out_obj_close(o);
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
	out_obj_open(o, "status");
	print_status(o, &c->status);
	out_obj_close(o);
	out_text(o, "%sby status\n", ind);
	out_text(o, "%s  %-32s %12llu\n", ind, "ASSURED",
		 (unsigned long long)c->status.assured);
	out_text(o, "%s  %-32s %12llu\n", ind, "UNREPLIED",
		 (unsigned long long)c->status.unreplied);
	out_text(o, "%s  %-32s %12llu\n", ind, "DYING",
		 (unsigned long long)c->status.dying);
	/* why it matters: what early_drop may evict to make room */
	if (c->total) {
		out_text(o, "%s  (early_drop evicts only entries not ASSURED: ",
			 ind);
		out_text(o, "a table full of ASSURED ones drops new flows)\n");
	}
	out_text(o, "%s%-22s %12s %12s %12s\n", ind, "tcp status by state",
		 "assured", "unreplied", "dying");
	for (i = 0; i < CTC_TCP_STATES; i++) {
		const struct ctc_status *s = &c->tcp_status[i];

		if (!c->tcp_state[i])
			continue;
		out_text(o, "%s  %-20s %12llu %12llu %12llu\n", ind,
			 ct_tcp_state_name(i), (unsigned long long)s->assured,
			 (unsigned long long)s->unreplied,
			 (unsigned long long)s->dying);
	}
	print_top(o, "sources", "top sources", &c->src, false, ind, top);
	print_top(o, "destinations", "top destinations", &c->dst, true, ind,
		  top);
	out_obj_close(o);
}

void print_ct_census(struct out *o, const struct ct_census *c,
		     const char *ind)
{
	print_ct_census_top(o, c, ind, CTC_PRINT_TOP);
}

void print_ctc_filter(struct out *o, const struct ctc_filter *f)
{
	char a[INET6_ADDRSTRLEN];
	const char *pn;

	if (!f->set)
		return;
	out_text(o, "filter");
	out_obj_open(o, "filter");
	if (f->set & CTF_FAMILY)
		out_str(o, "family", " --family %s",
			f->family == AF_INET6 ? "ipv6" : "ipv4");
	if (f->set & CTF_PROTO) {
		pn = ct_proto_name(f->proto);
		if (pn)
			out_str(o, "proto", " --proto %s", pn);
		else
			out_u64(o, "proto", " --proto %llu", f->proto);
	}
	if (f->set & CTF_STATE)
		out_str(o, "state", " --state %s",
			ct_tcp_state_name(f->tcp_state));
	if (f->set & CTF_ZONE)
		out_u64(o, "zone", " --zone %llu", f->zone);
	if (f->set & CTF_MARK) {
		out_u64(o, "mark", " --mark 0x%llx", f->mark);
		out_u64(o, "mark_mask", f->mark_mask == UINT32_MAX ? NULL :
			"/0x%llx", f->mark_mask);
	}
	if (f->set & CTF_SRC) {
		inet_ntop(f->src_family, f->src, a, sizeof(a));
		out_str(o, "src", " --src %s", a);
	}
	if (f->set & CTF_DST) {
		inet_ntop(f->dst_family, f->dst, a, sizeof(a));
		out_str(o, "dst", " --dst %s", a);
	}
	out_obj_close(o);
	out_text(o, "\n");
}
