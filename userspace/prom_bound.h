/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_PROM_BOUND_H
#define _TCPTW_PROM_BOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tables.h"

/*
 * What keeps the exposition's label sets bounded (docs/install.md,
 * "Series per host"): a port is part of a label only when it is a
 * service port, not one of ip_local_port_range's, so that an endpoint
 * reached on a port the kernel picked (a client's, a listener bound to
 * port 0) is labelled by its address alone; and each per-endpoint family
 * keeps a fixed number of endpoints, the busiest.
 */
struct prom_range {
	unsigned int lo, hi;	/* ip_local_port_range of the netns */
};

/* Rows of the peers and listeners tables exported, at most. */
#define PROM_TABLE_MAX 32

/* @port is neither 0 nor in @r: a label may carry it. */
bool prom_service_port(const struct prom_range *r, unsigned int port);
/* "addr:port" ("[addr]:port" for IPv6) for a service port, else "addr". */
void prom_endpoint(char *buf, size_t len, const char *addr, unsigned int port,
		   const struct prom_range *r);

struct prom_ep {
	char label[200];	/* the label set, escaped */
	uint64_t n;
};

/*
 * Sum the entries of @v[0..@n) whose labels are equal, then keep the @max
 * with the largest sums of at least @min, largest first (ties by label).
 * Returns how many are left at the start of @v.
 */
size_t prom_ep_top(struct prom_ep *v, size_t n, size_t max, uint64_t min);

/*
 * @in's rows into @out with the port column a service port, 0 (peers:
 * every source port of a server-side row) or TBL_NONE (a port of the
 * ephemeral range, unless @keep_ports), rows equal in key and port then
 * summed (last_* columns: the most recent), and only the @max rows that
 * counted most kept, in key order. -ENOMEM; free @out with table_free().
 */
int prom_table_bound(const struct table *in, const struct prom_range *r,
		     bool keep_ports, size_t max, struct table *out);

#endif /* _TCPTW_PROM_BOUND_H */
