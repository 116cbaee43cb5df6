// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw events: the module's recent decisions, and -f to follow them. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"
#include "counters.h"
#include "events.h"
#include "proc.h"
#include "ctr_names.h"

static void print_event(struct out *o, const struct tcptw_event *e)
{
	char tbuf[32];
	time_t t = e->sec;
	struct tm tm;

	strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S",
		 localtime_r(&t, &tm));
	out_obj_open(o, NULL);
	out_text(o, "%s.%03ld ", tbuf, e->nsec / 1000000);
	out_double(o, "time", NULL, e->sec + e->nsec / 1e9);
	if (e->have_seq)
		out_u64(o, "seq", NULL, e->seq);
	out_str(o, "event", "%-24s", e->name);
	out_str(o, "src", " %-24s", e->src);
	out_str(o, "dst", " -> %-24s", e->dst);
	if (e->age_ms != EV_NONE)
		out_s64(o, "age_ms", " age=%lldms", e->age_ms);
	if (e->tsval != EV_NONE)
		out_s64(o, "tsval", " tsval=%lld", e->tsval);
	if (e->ts_recent != EV_NONE)
		out_s64(o, "ts_recent", " ts_recent=%lld", e->ts_recent);
	if (strcmp(e->reason, "-"))
		out_str(o, "reason", " reason=%s", e->reason);
	if (e->idle_ms != EV_NONE)
		out_s64(o, "idle_ms", " idle=%lldms", e->idle_ms);
	out_text(o, "\n");
	out_obj_close(o);
}

/*
 * EventsRateLimited: events the module counted but did not record (over
 * its event_rate, per CPU and type); false if the counters file has none
 * (an older module) or cannot be read.
 */
static bool events_rate_limited(uint64_t *v)
{
	struct ctrset c = { 0 };
	bool ok = false;
	char *buf;

	buf = tcptw_read(TCPTW_DIR "/counters", NULL);
	if (buf && ctr_parse_snmp6(&c, buf, NULL) >= 0)
		ok = ctrset_get(&c, CTR(EVENTS_RATE_LIMITED), v);
	free(buf);
	ctrset_free(&c);
	return ok;
}

/*
 * events -f: poll the ring twice a second and print what is new, by seq
 * where the module numbers its events; the events the ring overwrote
 * between two reads are counted and reported on stderr (stdout stays
 * one event per line, plain or JSON).
 */
int cmd_events(const struct opts *opt)
{
	uint64_t lost, rl0 = 0, rl_prev = 0, rl;
	struct ev_follow f = { 0 };
	struct event_list l;
	bool have_rl;
	struct out o;
	size_t i;
	char *buf;
	int err;

	err = need_module("events");
	if (err)
		return err;
	install_stop_handlers();
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	have_rl = events_rate_limited(&rl0);
	rl_prev = rl0;
	do {
		buf = tcptw_read(TCPTW_DIR "/events", NULL);
		if (!buf)
			return table_err("events", -errno);
		err = events_parse(buf, &l);
		free(buf);
		if (err < 0)
			return fail("events", err);
		events_sort_seq(&l);
		/* numbering went back: the module was reloaded, start over */
		if (f.by_seq && l.n && l.v[l.n - 1].have_seq &&
		    l.v[l.n - 1].seq < f.last_seq) {
			fprintf(stderr, "tcptw: events: %s %llu\n",
				"module reloaded, numbering restarted at",
				(unsigned long long)l.v[0].seq);
			f.started = false;
		}
		for (i = 0; i < l.n; i++) {
			if (!ev_follow_take(&f, &l.v[i], &lost))
				continue;
			if (lost)
				fprintf(stderr, "tcptw: events: %llu lost before seq=%llu %s\n",
					(unsigned long long)lost,
					(unsigned long long)l.v[i].seq,
					"(the ring overwrote them between reads)");
			print_event(&o, &l.v[i]);
		}
		events_free(&l);
		if (fflush(stdout) || ferror(stdout))
			return fail("stdout", errno ? errno : EIO);
		if (opt->follow && have_rl && events_rate_limited(&rl) &&
		    rl > rl_prev) {
			fprintf(stderr, "tcptw: events: %llu not recorded %s\n",
				(unsigned long long)(rl - rl_prev),
				"(over the module's event_rate per CPU and type)");
			rl_prev = rl;
		}
	} while (opt->follow && sleep_interruptible(0.5));
	if (opt->follow && f.by_seq)
		fprintf(stderr, "tcptw: events: %llu lost in all\n",
			(unsigned long long)f.lost);
	if (opt->follow && have_rl && rl_prev > rl0)
		fprintf(stderr, "tcptw: events: %llu not recorded in all\n",
			(unsigned long long)(rl_prev - rl0));
	if (!opt->follow && have_rl && rl0)
		fprintf(stderr, "tcptw: events: %llu more %s\n",
			(unsigned long long)rl0,
			"were counted but not recorded (over the module's event_rate per CPU and type; EventsRateLimited)");
	return EXIT_OK;
}
