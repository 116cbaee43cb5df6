// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/tcp.h>
#include <netlink/netlink.h>
#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/idiag/idiagnl.h>
#include <netlink/idiag/msg.h>

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

static struct census_ep *ep_get(struct census_ep **v, size_t *n,
				const char *addr, uint16_t port)
{
	struct census_ep *nv;
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*v)[i].port == port && !strcmp((*v)[i].addr, addr))
			return &(*v)[i];
	/* grow by doubling: n is a power of two whenever it is full */
	if (!(*n & (*n - 1))) {
		nv = realloc(*v, (*n ? *n * 2 : 16) * sizeof(*nv));
		if (!nv)
			return NULL;
		*v = nv;
	}
	nv = &(*v)[(*n)++];
	memset(nv, 0, sizeof(*nv));
	snprintf(nv->addr, sizeof(nv->addr), "%s", addr);
	nv->port = port;
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
	ep = ep_get(&c->remote, &c->nremote, raddr, rport);
	if (!ep)
		return -ENOMEM;
	ep->n[s]++;
	/* client side: counted per destination, not per local port */
	if (lport >= c->port_lo && lport <= c->port_hi && c->port_hi) {
		ep->ephemeral++;
		return 0;
	}
	ep = ep_get(&c->local, &c->nlocal, "*", lport);
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

void census_free(struct census *c)
{
	free(c->remote);
	free(c->local);
	c->remote = NULL;
	c->local = NULL;
	c->nremote = 0;
	c->nlocal = 0;
}

struct walk {
	struct census *c;
	int err;
};

/*
 * libnl-idiag (3.7) stores idiag_sport/dport as they came in struct
 * inet_diag_sockid, in network byte order, and its getters return them
 * unconverted (checked against ss on this host), hence ntohs().
 */
static void walk_one(struct nl_object *obj, void *arg)
{
	struct idiagnl_msg *m = (struct idiagnl_msg *)obj;
	struct walk *w = arg;
	struct nl_addr *dst;
	char addr[64];
	int err;

	dst = idiagnl_msg_get_dst(m);
	if (!dst || !nl_addr2str(dst, addr, sizeof(addr)))
		return;
	err = census_add(w->c, idiagnl_msg_get_state(m),
			 ntohs(idiagnl_msg_get_sport(m)), addr,
			 ntohs(idiagnl_msg_get_dport(m)));
	if (err)
		w->err = err;
}

int census_collect(struct census *c)
{
	int states = (1 << TCP_ESTABLISHED) | (1 << TCP_SYN_SENT) |
		     (1 << TCP_SYN_RECV) | (1 << TCP_TIME_WAIT);
	struct walk w = { .c = c };
	struct nl_cache *cache = NULL;
	struct nl_sock *sk;
	int err;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	err = idiagnl_connect(sk);
	if (err < 0)
		goto out_nlerr;
	/*
	 * One dump covers both families: libnl sends the request with the
	 * legacy TCPDIAG_GETSOCK type, which the kernel answers for IPv4 and
	 * IPv6 alike (a second AF_INET6 dump returned the same sockets).
	 */
	err = idiagnl_msg_alloc_cache(sk, AF_INET, states, &cache);
	if (err < 0)
		goto out_nlerr;
	nl_cache_foreach(cache, walk_one, &w);
	nl_cache_free(cache);
	census_sort(c);
	nl_socket_free(sk);
	return w.err;

out_nlerr:
	/* libnl's NLE_* codes are not errnos: keep its message */
	c->why = nl_geterror(err);
	nl_socket_free(sk);
	return -EIO;
}
