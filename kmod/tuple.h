/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Fill an event's endpoints from sockets. IPv4-mapped IPv6 endpoints are
 * shown as IPv4, as ss does.
 */
#ifndef _TCPTW_TUPLE_H
#define _TCPTW_TUPLE_H

#include <net/inet_sock.h>
#include <net/inet_timewait_sock.h>
#include <net/ipv6.h>
#include <net/ip.h>
#include <linux/tcp.h>

#include "events.h"

/* A segment that hit @tw: src = the peer, dst = this host. */
static inline void tcptw_tuple_from_tw(struct tcptw_tuple *t,
				       const struct inet_timewait_sock *tw)
{
	t->sport = tw->tw_dport;
	t->dport = tw->tw_sport;
#if IS_ENABLED(CONFIG_IPV6)
	if (tw->tw_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&tw->tw_v6_daddr)) {
		t->family = AF_INET6;
		t->saddr.v6 = tw->tw_v6_daddr;
		t->daddr.v6 = tw->tw_v6_rcv_saddr;
		return;
	}
#endif
	t->family = AF_INET;
	t->saddr.v4 = tw->tw_daddr;
	t->daddr.v4 = tw->tw_rcv_saddr;
}

/* A socket's own view: src = local, dst = remote. */
static inline void tcptw_tuple_from_sk(struct tcptw_tuple *t,
				       const struct sock *sk)
{
	t->sport = inet_sk(sk)->inet_sport;
	t->dport = sk->sk_dport;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr)) {
		t->family = AF_INET6;
		t->saddr.v6 = sk->sk_v6_rcv_saddr;
		t->daddr.v6 = sk->sk_v6_daddr;
		return;
	}
#endif
	t->family = AF_INET;
	t->saddr.v4 = sk->sk_rcv_saddr;
	t->daddr.v4 = sk->sk_daddr;
}

/*
 * A received TCP segment: src/dst as on the wire. Needs the network and
 * transport headers set, as they are once TCP has the skb.
 */
static inline void tcptw_tuple_from_skb(struct tcptw_tuple *t,
					const struct sk_buff *skb)
{
	const struct tcphdr *th = tcp_hdr(skb);
	__be16 sport = th->source, dport = th->dest;
	const struct iphdr *iph;
	__be32 saddr, daddr;

	/* the loads first: for all the compiler knows, @t may alias the headers */
#if IS_ENABLED(CONFIG_IPV6)
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		t->saddr.v6 = ip6h->saddr;
		t->daddr.v6 = ip6h->daddr;
		t->sport = sport;
		t->dport = dport;
		t->family = AF_INET6;
		return;
	}
#endif
	iph = ip_hdr(skb);
	saddr = iph->saddr;
	daddr = iph->daddr;
	t->saddr.v4 = saddr;
	t->daddr.v4 = daddr;
	t->sport = sport;
	t->dport = dport;
	t->family = AF_INET;
}

/* The last peer timestamp @tw recorded, if any, into @ev. */
static inline void tcptw_event_ts_recent(struct tcptw_event *ev,
					 const struct inet_timewait_sock *tw)
{
	const struct tcp_timewait_sock *tcptw =
		tcp_twsk((const struct sock *)tw);

	ev->ts_recent = READ_ONCE(tcptw->tw_ts_recent);
	if (READ_ONCE(tcptw->tw_ts_recent_stamp))
		ev->flags |= TCPTW_EV_HAS_TS_RECENT;
}

/* The other direction of the same connection. */
static inline void tcptw_tuple_swap(struct tcptw_tuple *t)
{
	struct tcptw_tuple r = *t;

	t->saddr = r.daddr;
	t->daddr = r.saddr;
	t->sport = r.dport;
	t->dport = r.sport;
}

#endif /* _TCPTW_TUPLE_H */
