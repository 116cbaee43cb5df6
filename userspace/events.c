// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

static int parse_num(const char *s, int64_t *v)
{
	char *end;

	if (!strcmp(s, "-")) {
		*v = EV_NONE;
		return 0;
	}
	errno = 0;
	*v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return -EINVAL;
	return 0;
}

static int parse_seq(const char *s, struct tcptw_event *ev)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	ev->seq = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	ev->have_seq = true;
	return 0;
}

static int parse_time(const char *s, struct tcptw_event *ev)
{
	char *end, *frac;

	errno = 0;
	ev->sec = strtoll(s, &end, 10);
	if (errno || end == s || *end != '.')
		return -EINVAL;
	frac = end + 1;
	ev->nsec = strtol(frac, &end, 10);
	if (errno || end == frac || *end || ev->nsec < 0 ||
	    ev->nsec > 999999999)
		return -EINVAL;
	return 0;
}

static int copy_tok(char *dst, size_t len, const char *src)
{
	if (strlen(src) >= len)
		return -EINVAL;
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

int event_parse_line(const char *line, struct tcptw_event *ev)
{
	char buf[512], *save = NULL, *tok, *eq;
	int err = 0;

	if (strlen(line) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, line);
	memset(ev, 0, sizeof(*ev));
	ev->age_ms = EV_NONE;
	ev->tsval = EV_NONE;
	ev->ts_recent = EV_NONE;
	ev->idle_ms = EV_NONE;
	strcpy(ev->reason, "-");

	tok = strtok_r(buf, " \t\r\n", &save);
	if (!tok || parse_time(tok, ev))
		return -EINVAL;
	tok = strtok_r(NULL, " \t\r\n", &save);
	if (!tok || strchr(tok, '=') || copy_tok(ev->name, sizeof(ev->name),
						 tok))
		return -EINVAL;
	while (!err && (tok = strtok_r(NULL, " \t\r\n", &save))) {
		eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(tok, "src"))
			err = copy_tok(ev->src, sizeof(ev->src), eq);
		else if (!strcmp(tok, "dst"))
			err = copy_tok(ev->dst, sizeof(ev->dst), eq);
		else if (!strcmp(tok, "age_ms"))
			err = parse_num(eq, &ev->age_ms);
		else if (!strcmp(tok, "tsval"))
			err = parse_num(eq, &ev->tsval);
		else if (!strcmp(tok, "ts_recent"))
			err = parse_num(eq, &ev->ts_recent);
		else if (!strcmp(tok, "reason"))
			err = copy_tok(ev->reason, sizeof(ev->reason), eq);
		else if (!strcmp(tok, "idle_ms"))
			err = parse_num(eq, &ev->idle_ms);
		else if (!strcmp(tok, "seq"))
			err = parse_seq(eq, ev);
		/* later key=value tokens are appended by the ABI: skip */
	}
	return err;
}

int events_parse(const char *buf, struct event_list *l)
{
	const char *p = buf, *nl;
	struct tcptw_event ev, *nv;
	size_t cap = 0;
	char line[512];
	size_t len;

	l->v = NULL;
	l->n = 0;
	while (*p) {
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (!event_parse_line(line, &ev)) {
				if (l->n == cap) {
					cap = cap ? cap * 2 : 64;
					nv = realloc(l->v, cap * sizeof(*nv));
					if (!nv) {
						events_free(l);
						return -ENOMEM;
					}
					l->v = nv;
				}
				l->v[l->n++] = ev;
			}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return l->n;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct tcptw_event *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void events_sort_seq(struct event_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!l->v[i].have_seq)
			return;
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_seq);
}

bool ev_follow_take(struct ev_follow *f, const struct tcptw_event *e,
		    uint64_t *lost_before)
{
	*lost_before = 0;
	if (!f->started) {
		f->started = true;
		f->by_seq = e->have_seq;
	} else if (f->by_seq && e->have_seq) {
		if (e->seq <= f->last_seq)
			return false;
		*lost_before = e->seq - f->last_seq - 1;
		f->lost += *lost_before;
	} else {
		/* no seq (or the module was swapped): timestamps, as before */
		if (e->sec < f->last_sec ||
		    (e->sec == f->last_sec && e->nsec <= f->last_nsec))
			return false;
		f->by_seq = e->have_seq;
	}
	f->last_seq = e->seq;
	f->last_sec = e->sec;
	f->last_nsec = e->nsec;
	return true;
}

void events_free(struct event_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int split_endpoint(const char *ep, char *addr, size_t len, uint16_t *port)
{
	const char *end, *colon;
	unsigned long p;
	size_t alen;
	char *pe;

	if (*ep == '[') {
		end = strchr(ep, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		ep++;
		alen = end - ep;
		colon = end + 1;
	} else {
		colon = strrchr(ep, ':');
		if (!colon)
			return -EINVAL;
		alen = colon - ep;
	}
	if (!alen || alen >= len)
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &pe, 10);
	if (errno || pe == colon + 1 || *pe || p > 65535)
		return -EINVAL;
	memcpy(addr, ep, alen);
	addr[alen] = '\0';
	if (port)
		*port = p;
	return 0;
}

size_t events_top(const struct event_list *l, const char *name, bool use_dst,
		  struct peer_count *top, size_t max)
{
	struct peer_count *all = NULL, *nv, tmp;
	size_t i, j, n = 0;
	char addr[48];

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].name, name) ||
		    split_endpoint(use_dst ? l->v[i].dst : l->v[i].src, addr,
				   sizeof(addr), NULL))
			continue;
		for (j = 0; j < n && strcmp(all[j].addr, addr); j++)
			;
		if (j == n) {
			nv = realloc(all, (n + 1) * sizeof(*nv));
			if (!nv)
				break;
			all = nv;
			strcpy(all[n].addr, addr);
			all[n++].n = 0;
		}
		all[j].n++;
	}
	/* n is small (distinct peers in a 1024-entry ring): insertion sort */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && all[j].n > all[j - 1].n; j--) {
			tmp = all[j];
			all[j] = all[j - 1];
			all[j - 1] = tmp;
		}
	if (n > max)
		n = max;
	if (n)
		memcpy(top, all, n * sizeof(*top));
	free(all);
	return n;
}

void events_since(struct event_list *l, const struct event_list *base,
		  double t0)
{
	uint64_t seq0 = 0;
	bool by_seq = base;
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		by_seq &= l->v[i].have_seq;
	for (i = 0; base && i < base->n; i++) {
		by_seq &= base->v[i].have_seq;
		if (base->v[i].seq > seq0)
			seq0 = base->v[i].seq;
	}
	for (i = 0; i < l->n; i++) {
		const struct tcptw_event *e = &l->v[i];

		if (by_seq ? e->seq <= seq0 :
		    e->sec + e->nsec / 1e9 < t0)
			continue;
		l->v[n++] = *e;
	}
	l->n = n;
}
