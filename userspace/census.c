// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>

#include "census.h"
#include "nl.h"

const char *census_state_name(enum census_state s)
{
	static const char *const names[CS_NR] = {
		[CS_ESTAB] = "established", [CS_SYN_SENT] = "syn_sent",
		[CS_SYN_RECV] = "syn_recv", [CS_TIME_WAIT] = "time_wait",
		[CS_OTHER] = "other",
	};

	return names[s];
}

void census_init(struct census *c, uint32_t port_lo, uint32_t port_hi)
{
	memset(c, 0, sizeof(*c));
	c->port_lo = port_lo;
	c->port_hi = port_hi;
}

static enum census_state map_state(int st)
{
	switch (st) {
	case TCP_ESTABLISHED:
		return CS_ESTAB;
	case TCP_SYN_SENT:
		return CS_SYN_SENT;
	case TCP_SYN_RECV:
		return CS_SYN_RECV;
	case TCP_TIME_WAIT:
		return CS_TIME_WAIT;
	default:
		return CS_OTHER;
	}
}

/* FNV-1a over the address string and the port */
static uint32_t ep_hash(const char *addr, uint16_t port)
{
	uint32_t h = 2166136261u;

	for (; *addr; addr++)
		h = (h ^ (unsigned char)*addr) * 16777619u;
	h = (h ^ (port & 0xff)) * 16777619u;
	return (h ^ (port >> 8)) * 16777619u;
}

static void ix_insert(struct census_index *ix, const struct census_ep *v,
		      size_t i)
{
	size_t s = ep_hash(v[i].addr, v[i].port) & ix->mask;

	while (ix->slot[s])
		s = (s + 1) & ix->mask;
	ix->slot[s] = i + 1;
}

/* Slots for at least twice @n entries, refilled from @v[0..n). */
static int ix_rebuild(struct census_index *ix, const struct census_ep *v,
		      size_t n)
{
	size_t slots = 64, i;

	while (slots < 2 * (n + 1))
		slots *= 2;
	free(ix->slot);
	ix->slot = calloc(slots, sizeof(*ix->slot));
	if (!ix->slot) {
		ix->mask = 0;
		return -ENOMEM;
	}
	ix->mask = slots - 1;
	for (i = 0; i < n; i++)
		ix_insert(ix, v, i);
	return 0;
}

static struct census_ep *ep_get(struct census_ep **v, size_t *n,
				struct census_index *ix, const char *addr,
				uint16_t port)
{
	struct census_ep *nv;
	size_t s;

	/* kept at most half full, so a probe ends at a free slot */
	if ((!ix->slot || 2 * (*n + 1) > ix->mask + 1) &&
	    ix_rebuild(ix, *v, *n))
		return NULL;
	for (s = ep_hash(addr, port) & ix->mask; ix->slot[s];
	     s = (s + 1) & ix->mask) {
		nv = &(*v)[ix->slot[s] - 1];
		if (nv->port == port && !strcmp(nv->addr, addr))
			return nv;
	}
	/* grow by doubling: n is a power of two whenever it is full */
	if (!(*n & (*n - 1))) {
		nv = realloc(*v, (*n ? *n * 2 : 16) * sizeof(*nv));
		if (!nv)
			return NULL;
		*v = nv;
	}
	nv = &(*v)[*n];
	memset(nv, 0, sizeof(*nv));
	snprintf(nv->addr, sizeof(nv->addr), "%s", addr);
	nv->port = port;
	ix->slot[s] = ++*n;
	return nv;
}

int census_add(struct census *c, int tcp_state, uint16_t lport,
	       const char *raddr, uint16_t rport)
{
	enum census_state s = map_state(tcp_state);
	struct census_ep *ep;

	if (tcp_state == TCP_LISTEN || tcp_state == TCP_CLOSE)
		return 0;
	c->total[s]++;
	ep = ep_get(&c->remote, &c->nremote, &c->rix, raddr, rport);
	if (!ep)
		return -ENOMEM;
	ep->n[s]++;
	/* client side: counted per destination, not per local port */
	if (lport >= c->port_lo && lport <= c->port_hi && c->port_hi) {
		ep->ephemeral++;
		return 0;
	}
	ep = ep_get(&c->local, &c->nlocal, &c->lix, "*", lport);
	if (!ep)
		return -ENOMEM;
	ep->n[s]++;
	return 0;
}

static uint32_t ep_total(const struct census_ep *ep)
{
	uint32_t t = 0;
	int s;

	for (s = 0; s < CS_NR; s++)
		t += ep->n[s];
	return t;
}

static int ep_cmp(const void *a, const void *b)
{
	uint32_t ta = ep_total(a), tb = ep_total(b);

	return ta < tb ? 1 : ta > tb ? -1 : 0;
}

void census_sort(struct census *c)
{
	/* the order changes: a later census_add() rebuilds the indexes */
	free(c->rix.slot);
	free(c->lix.slot);
	c->rix.slot = NULL;
	c->lix.slot = NULL;
	if (c->nremote)
		qsort(c->remote, c->nremote, sizeof(*c->remote), ep_cmp);
	if (c->nlocal)
		qsort(c->local, c->nlocal, sizeof(*c->local), ep_cmp);
}

double census_share(const struct census *c, const struct census_ep *ep)
{
	if (!c->port_hi || c->port_hi < c->port_lo)
		return 0;
	return (double)ep->ephemeral / (c->port_hi - c->port_lo + 1);
}

/* @a ranks before @b: more ephemeral ports, then address, then port */
static bool ranks_before(const struct census_ep *a, const struct census_ep *b)
{
	int d;

	if (a->ephemeral != b->ephemeral)
		return a->ephemeral > b->ephemeral;
	d = strcmp(a->addr, b->addr);
	return d ? d < 0 : a->port < b->port;
}

size_t census_top_ephemeral(const struct census *c,
			    const struct census_ep **top, size_t max,
			    double min_share)
{
	size_t i, j, n = 0;

	/* insertion into a short sorted list: O(nremote * max) */
	for (i = 0; i < c->nremote && max; i++) {
		const struct census_ep *ep = &c->remote[i];

		if (!ep->ephemeral || census_share(c, ep) < min_share)
			continue;
		if (n == max && !ranks_before(ep, top[n - 1]))
			continue;
		j = n < max ? n++ : n - 1;
		for (; j > 0 && ranks_before(ep, top[j - 1]); j--)
			top[j] = top[j - 1];
		top[j] = ep;
	}
	return n;
}

void census_free(struct census *c)
{
	free(c->remote);
	free(c->local);
	free(c->rix.slot);
	free(c->lix.slot);
	c->rix.slot = NULL;
	c->lix.slot = NULL;
	c->remote = NULL;
	c->local = NULL;
	c->nremote = 0;
	c->nlocal = 0;
}

struct walk {
	struct census *c;
	int err;
};

/* One inet_diag_msg of the dump: into the census, nothing kept. */
static int dump_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	struct walk *w = arg;
	char addr[INET6_ADDRSTRLEN];
	int err;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return MNL_CB_OK;
	if (!inet_ntop(m->idiag_family, m->id.idiag_dst, addr, sizeof(addr)))
		return MNL_CB_OK;
	err = census_add(w->c, m->idiag_state, ntohs(m->id.idiag_sport), addr,
			 ntohs(m->id.idiag_dport));
	if (err) {
		w->err = err;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int dump_family(struct mnl_socket *nl, char *buf, size_t len,
		       uint8_t family, struct walk *w)
{
	struct inet_diag_req_v2 *req;
	struct nlmsghdr *nlh;
	int err;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = time(NULL) + family;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = (1 << TCP_ESTABLISHED) | (1 << TCP_SYN_SENT) |
			    (1 << TCP_SYN_RECV) | (1 << TCP_TIME_WAIT);
	err = nl_talk(nl, buf, len, nlh, dump_cb, w);
	/* a callback's own error before errno */
	return w->err ?: err;
}

int census_collect(struct census *c)
{
	/* a dump batches up to 32 KiB of messages per read */
	size_t len = 65536;
	struct walk w = { .c = c };
	struct mnl_socket *nl;
	char *buf;
	int err;

	nl = mnl_socket_open(NETLINK_SOCK_DIAG);
	if (!nl) {
		c->why = "sock_diag socket";
		return -errno;
	}
	buf = malloc(len);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		c->why = "sock_diag bind";
		goto out;
	}
	err = nl_set_timeout(nl);
	if (err)
		goto out;
	err = dump_family(nl, buf, len, AF_INET, &w);
	/* a kernel without IPv6 has nothing to dump there */
	if (!err) {
		err = dump_family(nl, buf, len, AF_INET6, &w);
		if (err == -ENOENT || err == -EAFNOSUPPORT)
			err = 0;
	}
	if (err && !c->why)
		c->why = "sock_diag dump";
	census_sort(c);
out:
	free(buf);
	mnl_socket_close(nl);
	return err;
}
