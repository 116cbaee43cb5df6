/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_CENSUS_H
#define _TCPTW_CENSUS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Socket census over NETLINK_SOCK_DIAG, linear in the sockets (hashed by
 * endpoint): TIME_WAIT, ESTABLISHED, SYN-RECV and
 * SYN-SENT sockets per remote endpoint and per local port outside the
 * ephemeral range (the services), and per remote endpoint the number of
 * sockets whose local port is in the ephemeral range (each holds one port
 * of the range against that destination).
 */
enum census_state { CS_ESTAB, CS_SYN_SENT, CS_SYN_RECV, CS_TIME_WAIT,
		    CS_OTHER, CS_NR };

struct census_ep {
	char addr[48];
	uint16_t port;
	uint32_t n[CS_NR];
	uint32_t ephemeral;	/* sockets using a port of the range */
};

/*
 * An open-addressing hash over one endpoint array: slot[i] is an index
 * into it plus one, 0 is free. Rebuilt when the array grows or is sorted.
 */
struct census_index {
	uint32_t *slot;
	size_t mask;		/* slots - 1, a power of two minus one */
};

struct census {
	uint32_t total[CS_NR];
	uint32_t port_lo, port_hi;	/* ip_local_port_range */
	struct census_ep *remote, *local;
	size_t nremote, nlocal;
	struct census_index rix, lix;
	const char *why;	/* what failed when collect did, or NULL */
};

const char *census_state_name(enum census_state s);
/* Call before census_add(): the range decides what counts as ephemeral. */
void census_init(struct census *c, uint32_t port_lo, uint32_t port_hi);
/* One socket; @tcp_state is the kernel's TCP_* state number. */
int census_add(struct census *c, int tcp_state, uint16_t lport,
	       const char *raddr, uint16_t rport);
/* Busiest endpoints first (by sockets of every state). */
void census_sort(struct census *c);
/*
 * The client side's busiest destinations: up to @max endpoints holding at
 * least @min_share of the ephemeral range, most ports first (ties by
 * address and port, so the order is stable), into @top. Returns how many.
 */
size_t census_top_ephemeral(const struct census *c,
			    const struct census_ep **top, size_t max,
			    double min_share);
/* Share in [0,1] of the ephemeral range held against @ep. */
double census_share(const struct census *c, const struct census_ep *ep);
void census_free(struct census *c);
/*
 * Dump the current netns's TCP sockets over NETLINK_SOCK_DIAG (libmnl),
 * one inet_diag_msg at a time into census_add(), as ss does: nothing is
 * kept per socket. -errno.
 */
int census_collect(struct census *c);

#endif /* _TCPTW_CENSUS_H */
