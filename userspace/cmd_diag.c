// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "counters.h"
#include "diagnose.h"
#include "proc.h"

/* The module's tables: events, peers, listeners; and diagnose. */

static int need_module(const char *what)
{
	if (tcptw_module_loaded())
		return 0;
	fprintf(stderr, "tcptw: %s: %s\n", what, module_hint());
	return EXIT_RUNTIME;
}

static int table_err(const char *file, int err)
{
	char what[64];

	snprintf(what, sizeof(what), "/proc/net/tcptw/%s", file);
	if (err == -EPERM || err == -EACCES) {
		fprintf(stderr, "tcptw: %s: %s (needs CAP_NET_ADMIN over the netns)\n",
			what,
			strerror(-err));
		return EXIT_RUNTIME;
	}
	return fail(what, err);
}

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
		ok = ctrset_get(&c, "EventsRateLimited", v);
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

static int print_table(const struct opts *opt, const char *file)
{
	struct table t;
	struct out o;
	size_t r, c;
	char rel[64];
	char *buf;
	int err;

	err = need_module(file);
	if (err)
		return err;
	snprintf(rel, sizeof(rel), TCPTW_DIR "/%s", file);
	buf = tcptw_read(rel, NULL);
	if (!buf)
		return table_err(file, -errno);
	err = table_parse(buf, &t);
	free(buf);
	if (err < 0)
		return fail(rel, err);
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_arr_open(&o, NULL);
	for (c = 0; c < t.ncols; c++)
		out_text(&o, c ? " %*s" : "%-*s", c ? (int)strlen(t.cols[c]) :
			 40, t.cols[c]);
	out_text(&o, "\n");
	for (r = 0; r < t.nrows; r++) {
		out_obj_open(&o, NULL);
		out_str(&o, t.cols[0], "%-40s", t.rows[r].key);
		for (c = 1; c < t.ncols; c++) {
			if (t.rows[r].v[c] == TBL_NONE) {
				out_null(&o, t.cols[c], "");
				out_text(&o, " %*s", (int)strlen(t.cols[c]),
					 "-");
				continue;
			}
			out_u64(&o, t.cols[c], NULL, t.rows[r].v[c]);
			out_text(&o, " %*llu", (int)strlen(t.cols[c]),
				 (unsigned long long)t.rows[r].v[c]);
		}
		out_text(&o, "\n");
		out_obj_close(&o);
	}
	out_arr_close(&o);
	if (!opt->json && !t.nrows)
		printf("(no rows)\n");
	table_free(&t);
	return EXIT_OK;
}

int cmd_peers(const struct opts *opt)
{
	return print_table(opt, "peers");
}

int cmd_listeners(const struct opts *opt)
{
	return print_table(opt, "listeners");
}

static void print_evidence(struct out *o, const struct evidence *e)
{
	out_obj_open(o, NULL);
	out_str(o, "name", "    %-36s", e->name);
	switch (e->kind) {
	case EVK_DELTA:
		out_s64(o, "delta", " +%lld", e->v);
		out_double(o, "rate", " (%.1f/s)", e->x);
		break;
	case EVK_VALUE:
		out_s64(o, "value", " = %lld", e->v);
		break;
	case EVK_SHARE:
		out_s64(o, "ephemeral_in_use", " %lld local ports",
			e->v);
		out_double(o, "range_share", " = %.1f%% of the range",
			   100 * e->x);
		break;
	case EVK_LISTENER:
		out_s64(o, "overflows", " %lld overflows", e->v);
		if (e->a != TBL_NONE)
			out_u64(o, "backlog", ", backlog %llu", e->a);
		if (e->b != TBL_NONE)
			out_u64(o, "max_backlog", "/%llu", e->b);
		break;
	}
	out_text(o, "\n");
	out_obj_close(o);
}

/*
 * Plain: @text after @label, word-wrapped at 78 columns and indented under
 * its first line. JSON: the string as is.
 */
static void print_wrapped(struct out *o, const char *key, const char *label,
			  const char *text)
{
	int col, indent = (int)strlen(label), len;
	const char *p = text, *sp;

	if (o->json) {
		out_str(o, key, NULL, text);
		return;
	}
	fputs(label, o->f);
	col = indent;
	while (*p) {
		sp = strchr(p, ' ');
		len = sp ? (int)(sp - p) : (int)strlen(p);
		if (col > indent && col + 1 + len > 78) {
			fprintf(o->f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', o->f);
			col++;
		}
		fprintf(o->f, "%.*s", len, p);
		col += len;
		p += len;
		while (*p == ' ')
			p++;
	}
	fputc('\n', o->f);
}

static void print_finding(struct out *o, const struct finding *f)
{
	int i;

	out_obj_open(o, NULL);
	out_str(o, "id", "\n[%s] ", f->id);
	out_str(o, "title", "%s\n", f->title);
	out_text(o, "  evidence:\n");
	out_arr_open(o, "evidence");
	for (i = 0; i < f->nev; i++)
		print_evidence(o, &f->ev[i]);
	out_arr_close(o);
	if (f->npeers) {
		out_text(o, "  peers (from %s):\n", f->peers_from);
		out_str(o, "peers_from", NULL, f->peers_from);
	}
	out_arr_open(o, "peers");
	for (i = 0; i < f->npeers; i++) {
		out_obj_open(o, NULL);
		out_str(o, "addr", "    %-36s", f->peers[i].addr);
		out_u64(o, "count", " %llu\n", f->peers[i].n);
		out_obj_close(o);
	}
	out_arr_close(o);
	out_arr_open(o, "notes");
	for (i = 0; i < f->nnotes; i++)
		print_wrapped(o, NULL, "  note: ", f->notes[i]);
	out_arr_close(o);
	print_wrapped(o, "remedy", "  remedy: ", f->remedy);
	out_obj_close(o);
}

/* Refuse a baseline that cannot be compared with @cur; warn on an old one. */
static int check_baseline(const char *path, const struct snapshot *base,
			  const struct snapshot *cur)
{
	char why[200];

	switch (baseline_check(base, cur, cur->ts, why, sizeof(why))) {
	case BASE_OK:
		return 0;
	case BASE_OLD_FORMAT:
		fprintf(stderr, "tcptw: warning: baseline %s %s\n", path, why);
		return 0;
	default:
		fprintf(stderr, "tcptw: baseline %s %s: not used\n", path, why);
		return EXIT_RUNTIME;
	}
}

/*
 * The two snapshots of the window. Ctrl-C while sampling ends the window
 * early: what was seen so far is still diagnosed (*@cut says so).
 */
static int load_or_sample(const struct opts *opt, struct snapshot *base,
			  struct snapshot *cur, bool *cut)
{
	int err;

	*cut = false;
	if (opt->baseline) {
		err = snapshot_load(base, opt->baseline);
		if (err) {
			fprintf(stderr, "tcptw: %s: %s\n", opt->baseline,
				err == -EINVAL ? "not a tcptw baseline file" :
				strerror(-err));
			return EXIT_RUNTIME;
		}
	} else {
		snapshot_take(base, SNAP_CT | SNAP_HISTCTR);
		if (opt->since > 0 && !sleep_interruptible(opt->since))
			*cut = true;
	}
	snapshot_take(cur, SNAP_ALL & ~SNAP_HIST);
	if (cur->mib_err) {
		snapshot_free(base);
		snapshot_free(cur);
		return fail("/proc/net/netstat", cur->mib_err);
	}
	if (opt->baseline) {
		err = check_baseline(opt->baseline, base, cur);
		if (err) {
			snapshot_free(base);
			snapshot_free(cur);
			return err;
		}
	}
	return 0;
}

int cmd_diagnose(const struct opts *opt)
{
	struct diag_window w = { 0 };
	struct snapshot base, cur;
	struct diag_input in = { 0 };
	struct diag_result *r;
	struct out o;
	bool cut;
	int err, i;

	install_stop_handlers();
	/* --save-baseline alone: record now, compare on a later run */
	if (opt->save_baseline && !opt->baseline && opt->since <= 0) {
		snapshot_take(&cur, SNAP_CT | SNAP_HISTCTR);
		err = snapshot_save(&cur, opt->save_baseline);
		snapshot_free(&cur);
		if (err)
			return fail(opt->save_baseline, err);
		if (!opt->json)
			printf("baseline saved to %s\n", opt->save_baseline);
		return EXIT_OK;
	}
	err = load_or_sample(opt, &base, &cur, &cut);
	if (err)
		return err;
	/* Ctrl-C again from here on ends nothing early */
	tcptw_stop = 0;
	r = calloc(1, sizeof(*r));
	if (!r || snapshot_diag_input(&base, &cur, opt->baseline ?
				      cur.ts - base.ts : cur.mono - base.mono,
				      &w, &in)) {
		err = fail("diagnose", -ENOMEM);
		goto out;
	}
	diagnose_run(&in, r);
	if (cut)
		fprintf(stderr, "tcptw: diagnose: interrupted, %s %.1f s\n",
			"diagnosing the window sampled so far:", in.secs);

	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_obj_open(&o, NULL);
	out_str(&o, "netns", "tcptw diagnose: netns %s", opt->label);
	out_double(&o, "ts", NULL, cur.ts);
	out_double(&o, "window_s", ", %.1f s window", in.secs);
	out_text(&o, opt->baseline ? " (since baseline)\n" :
		 cut ? " (interrupted)\n" : "\n");
	if (cut)
		out_bool(&o, "interrupted", NULL, true);
	module_note(&o, &cur);
	module_hint_once(&cur, "diagnosing from the kernel's MIBs alone");
	out_str(&o, "verdict", NULL, r->n ? "problem" : "no evidence");
	out_arr_open(&o, "findings");
	for (i = 0; i < r->n; i++)
		print_finding(&o, &r->f[i]);
	out_arr_close(&o);
	if (!r->n && !o.json) {
		char list[200];

		out_text(&o, "\n");
		/* resets it could not judge are no evidence either way */
		snprintf(list, sizeof(list), "%s%s",
			 "PAWS/TIME_WAIT rejections, port exhaustion, TIME_WAIT overflow, listen queue overflow, conntrack drops",
			 r->idle_untold ? "" : ", NAT idle resets");
		print_wrapped(&o, NULL, "no evidence of: ", list);
	}
	out_arr_open(&o, "caveats");
	for (i = 0; i < r->ncaveats; i++)
		out_str(&o, NULL, "caveat: %s\n", r->caveats[i]);
	out_arr_close(&o);
	out_obj_close(&o);
	err = r->n ? EXIT_FOUND : EXIT_OK;
	if (opt->save_baseline) {
		int e = snapshot_save(&cur, opt->save_baseline);

		if (e)
			err = fail(opt->save_baseline, e);
	}
out:
	free(r);
	diag_window_free(&w);
	snapshot_free(&base);
	snapshot_free(&cur);
	return err;
}
