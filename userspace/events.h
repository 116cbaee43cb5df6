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
	bool have_seq;		/* seq= present (modules since seq) */
	uint64_t seq;		/* per-netns event number, from 1 */
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
 * Following the events file across reads. With seq= (the module numbers
 * every event of a netns), an event is new if its seq is above the last
 * one seen, and a gap between two seqs is that many events lost: the ring
 * overwrote them before this reader came back (or a writer gave up).
 * Without seq= (older modules), new means a later timestamp than the last
 * one printed, which misses events whose CPU clock lagged.
 */
struct ev_follow {
	bool started;		/* something was seen */
	bool by_seq;
	uint64_t last_seq;
	int64_t last_sec;
	long last_nsec;
	uint64_t lost;		/* total so far */
};

/* Order @l by seq where every event has one (the ring's order else). */
void events_sort_seq(struct event_list *l);
/*
 * Is @e new to @f? If so, record it; *@lost_before: the events lost
 * between the previous new one and @e (0 for the very first event: what
 * the ring no longer held before this reader started is not lost to it).
 */
bool ev_follow_take(struct ev_follow *f, const struct tcptw_event *e,
		    uint64_t *lost_before);

/*
 * Keep the events of @l that came after @base (the ring read earlier):
 * those numbered above @base's last seq, or, without seq=, dated at
 * @t0 (CLOCK_REALTIME seconds) or later.
 */
void events_since(struct event_list *l, const struct event_list *base,
		  double t0);
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
