// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw watch: what moved per interval, on a fixed grid. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "counters.h"
#include "netns.h"

static void print_census_totals(struct out *o, const struct snapshot *s)
{
	const struct census_ep *top;
	int st;

	if (!s->have_census)
		return;
	out_text(o, "  sockets:");
	out_obj_open(o, "sockets");
	for (st = 0; st < CS_OTHER; st++) {
		out_text(o, " %s %u", census_state_name(st),
			 s->census.total[st]);
		out_u64(o, census_state_name(st), NULL, s->census.total[st]);
	}
	if (census_top_ephemeral(&s->census, &top, 1, 0))
		out_text(o, "; busiest %s:%u holds %.1f%% of the port range",
			 top->addr, top->port,
			 100 * census_share(&s->census, top));
	out_text(o, "\n");
	out_obj_close(o);
}

/* One netns being watched: where it is and its previous sample. */
struct watched {
	int fd;			/* -1: the netns tcptw runs in */
	char label[128];
	struct snapshot prev;
	bool have_prev;
};

/* Print @w's interval from its previous sample to @cur; keeps @cur. */
static int watch_print(struct out *o, struct watched *w, struct snapshot *cur)
{
	struct deltaset mod, mib, ct = { 0 };
	const struct ctrset none = { 0 };
	struct snapshot *prev = &w->prev;
	char tbuf[32];
	double secs;
	struct tm tm;
	time_t t;

	secs = cur->mono - prev->mono;
	if (ctr_diff(&prev->mod, &cur->mod, secs, &mod) ||
	    ctr_diff(&prev->mib, &cur->mib, secs, &mib) ||
	    ctr_diff(prev->have_ct ? &prev->ct.stats : NULL,
		     cur->have_ct ? &cur->ct.stats : &none, secs, &ct))
		return -ENOMEM;
	t = (time_t)cur->ts;
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", localtime_r(&t, &tm));
	out_obj_open(o, NULL);
	out_str(o, "netns", NULL, w->label);
	out_double(o, "ts", NULL, cur->ts);
	out_double(o, "interval", NULL, secs);
	module_note(o, cur);
	out_text(o, "--- %s  netns %s  %.1f s\n", tbuf, w->label, secs);
	print_moved(o, "counters", &mod, false, "");
	print_moved(o, "mib", &mib, true, "");
	if (cur->have_ct)
		print_moved(o, "conntrack", &ct, false, "");
	print_census_totals(o, cur);
	out_obj_close(o);
	deltaset_free(&mod);
	deltaset_free(&mib);
	deltaset_free(&ct);
	snapshot_free(prev);
	*prev = *cur;
	return 0;
}

/* A sample of @w's netns into @s; false if it could not be entered. */
static bool watch_take(struct watched *w, struct snapshot *s, unsigned int what)
{
	int err;

	if (w->fd >= 0) {
		err = netns_enter_fd(w->fd);
		if (err) {
			fprintf(stderr, "tcptw: setns %s: %s\n", w->label,
				strerror(-err));
			return false;
		}
	}
	snapshot_take(s, what);
	return true;
}

static int watch_loop(const struct opts *opt, struct watched *w, size_t nw,
		      int self)
{
	struct snapshot cur;
	double next = 0;
	struct out o;
	long n = 0;
	size_t i;
	int rc = EXIT_OK;

	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	for (i = 0; i < nw; i++) {
		w[i].have_prev = watch_take(&w[i], &w[i].prev, SNAP_CT);
		if (w[i].have_prev && w[i].prev.mib_err) {
			rc = fail("/proc/net/netstat", w[i].prev.mib_err);
			goto out;
		}
		if (w[i].have_prev)
			module_hint_once(&w[i].prev,
					 "watching kernel MIBs and conntrack only");
		if (!next && w[i].have_prev)
			next = w[i].prev.mono;
	}
	/*
	 * Sample on a fixed grid from the first sample, not a sleep after
	 * each one: a slow census (100k sockets) must not stretch the
	 * period. A sample that overran a tick skips it; interval says so.
	 */
	for (;;) {
		next = tick_next(next, snapshot_clock(CLOCK_MONOTONIC),
				 opt->interval);
		if (!sleep_until(next))
			break;
		for (i = 0; i < nw; i++) {
			if (!watch_take(&w[i], &cur, SNAP_CT | SNAP_CENSUS))
				continue;
			if (!w[i].have_prev) {
				w[i].prev = cur;
				w[i].have_prev = true;
				continue;
			}
			if (watch_print(&o, &w[i], &cur)) {
				snapshot_free(&cur);
				rc = fail("watch", -ENOMEM);
				goto out;
			}
		}
		if (fflush(stdout) || ferror(stdout)) {
			rc = fail("write to stdout", errno ? errno : EIO);
			break;
		}
		if (opt->count && ++n >= opt->count)
			break;
	}
out:
	if (self >= 0 && netns_enter_fd(self))
		rc = EXIT_RUNTIME;
	for (i = 0; i < nw; i++)
		if (w[i].have_prev)
			snapshot_free(&w[i].prev);
	return rc;
}

int cmd_watch(const struct opts *opt)
{
	struct watched one = { .fd = -1 }, *w;
	struct netns_list l;
	int self, err, rc;
	size_t i;

	install_stop_handlers();
	if (!opt->all_netns) {
		snprintf(one.label, sizeof(one.label), "%s", opt->label);
		return watch_loop(opt, &one, 1, -1);
	}
	/* the set of namespaces is the one at start */
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return fail("/proc/self/ns/net", errno);
	err = netns_list_all(&l);
	w = err ? NULL : calloc(l.n ? l.n : 1, sizeof(*w));
	if (!w) {
		close(self);
		if (!err)
			netns_list_free(&l);
		return fail("listing network namespaces", err ? err : -ENOMEM);
	}
	for (i = 0; i < l.n; i++) {
		w[i].fd = l.v[i].fd;
		snprintf(w[i].label, sizeof(w[i].label), "%s", l.v[i].label);
	}
	rc = watch_loop(opt, w, l.n, self);
	free(w);
	netns_list_free(&l);
	close(self);
	return rc;
}
