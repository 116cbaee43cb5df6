/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_EVENTS_H
#define _TCPTW_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EV_NONE INT64_MIN	/* a "-" field */

/* One line of /proc/net/tcptw/events (docs/proc-format.md). */
struct tcptw_event {
	int64_t sec;
	long nsec;
	char name[32];
	char src[64];		/* addr:port or [v6]:port, as printed */
	char dst[64];
	int64_t age_ms, tsval, ts_recent;
	int64_t idle_ms;	/* rst_received: silence before the RST */
	char reason[48];
};

struct event_list {
	struct tcptw_event *v;
	size_t n;
};

/* 0, or -EINVAL for a line that is not an event. Unknown tokens ignored. */
int event_parse_line(const char *line, struct tcptw_event *ev);
/* Every parseable line; returns the count or -ENOMEM. */
int events_parse(const char *buf, struct event_list *l);
void events_free(struct event_list *l);

/*
 * Address part of "1.2.3.4:80" or "[fd00::1]:80" into @addr (no brackets);
 * port into @port if not NULL. -EINVAL if malformed.
 */
int split_endpoint(const char *ep, char *addr, size_t len, uint16_t *port);

/*
 * Peers by event count: the @max busiest addresses among @l's @name events,
 * from src= or, for connect()-side events (src is local), from dst=.
 */
struct peer_count {
	char addr[48];
	uint64_t n;
};

size_t events_top(const struct event_list *l, const char *name, bool use_dst,
		  struct peer_count *top, size_t max);

#endif /* _TCPTW_EVENTS_H */
