// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * tcptw run's report: what moved in each netns over exactly CMD's window,
 * the rows that moved most, diagnose's findings; plain or one JSON object.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util.h"
#include "counters.h"
#include "run.h"

/* peers and listeners rows shown per netns */
#define RUN_TOP_ROWS 5

/* The rows of @d (a table's delta over the run) that moved most. */
static void print_rows(struct out *o, const char *key, const char *title,
		       const struct table *d)
{
	size_t idx[RUN_TOP_ROWS], n, i, c;
	char ep[80];
	int pc = table_col(d, "port");

	n = table_top_moved(d, idx, RUN_TOP_ROWS);
	if (n)
		out_text(o, "  %s that moved most:\n", title);
	out_arr_open(o, key);
	for (i = 0; i < n; i++) {
		const struct tbl_row *row = &d->rows[idx[i]];

		snprintf(ep, sizeof(ep), "%s:%llu", row->key,
			 pc < 0 ? 0ULL : (unsigned long long)row->v[pc]);
		out_obj_open(o, NULL);
		out_text(o, "    %-40s", ep);
		out_str(o, "addr", NULL, row->key);
		if (pc >= 0)
			out_u64(o, "port", NULL, row->v[pc]);
		out_u64(o, "moved", NULL, table_row_moved(d, idx[i]));
		out_obj_open(o, "deltas");
		for (c = 1; c < d->ncols; c++) {
			if (table_col_gauge(d->cols[c]) || !row->v[c] ||
			    row->v[c] == TBL_NONE)
				continue;
			out_text(o, " %s +%llu", d->cols[c],
				 (unsigned long long)row->v[c]);
			out_u64(o, d->cols[c], NULL, row->v[c]);
		}
		out_obj_close(o);
		out_text(o, "\n");
		out_obj_close(o);
	}
	out_arr_close(o);
}

static size_t moved(const struct deltaset *d, bool mib)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++)
		n += d->v[i].delta && !(d->v[i].flags & CTR_GONE) &&
		     (!mib || mib_relevant(d->v[i].name));
	return n;
}

static void unseen(struct out *o, const char *what)
{
	out_str(o, NULL, "  could not see: %s\n", what);
}

/* What the report lacks, and why: said in the data, never silent. */
static void print_unseen(struct out *o, const struct snapshot *s)
{
	char buf[160];

	out_arr_open(o, "unseen");
	if (!s->module) {
		unseen(o, "tcptw.ko's counters, events, peers and listeners (not loaded)");
	} else {
		if (s->mod_err) {
			snprintf(buf, sizeof(buf), "tcptw.ko's counters: %s",
				 strerror(-s->mod_err));
			unseen(o, buf);
		}
		if (s->events_err) {
			snprintf(buf, sizeof(buf), "events: %s",
				 strerror(-s->events_err));
			unseen(o, buf);
		}
		if (s->peers_err || s->listeners_err) {
			snprintf(buf, sizeof(buf), "peers and listeners: %s",
				 strerror(-(s->peers_err ? s->peers_err :
					    s->listeners_err)));
			unseen(o, buf);
		}
	}
	if (!s->have_census) {
		snprintf(buf, sizeof(buf), "sockets (%s): %s",
			 s->census.why ? s->census.why : "sock_diag",
			 strerror(-s->census_err));
		unseen(o, buf);
	}
	if (!s->have_ct)
		unseen(o, "conntrack (nf_conntrack not loaded in this netns)");
	out_arr_close(o);
}

/* One netns's part of the report; *@found when diagnose named a cause. */
/* "  WHAT: start N, peak N, end N" without its line's end; JSON keys */
static void print_gauge(struct out *o, const char *what,
			const struct gauge_track *g)
{
	if (!g->have)
		return;
	out_text(o, "  %s: ", what);
	out_u64(o, "start", "start %llu", g->start);
	out_u64(o, "peak", ", peak %llu", g->peak);
	out_u64(o, "end", ", end %llu", g->end);
}

static int report_target(struct out *o, struct run *r, struct target *t,
			 bool *found)
{
	struct table pd = { 0 }, ld = { 0 };
	struct diag_window w = { 0 };
	struct diag_input in;
	struct diag_result *res;
	struct snapshot end;
	int err = 0;

	if (!t->have_base || run_target_enter(t))
		return EXIT_RUNTIME;
	snapshot_take(&end, (SNAP_ALL & ~SNAP_HIST) | SNAP_CTCENSUS);
	if (end.mib_err) {
		snapshot_free(&end);
		return fail("/proc/net/netstat", end.mib_err);
	}
	run_track(t, &end);
	module_hint_once(&end,
			 "reporting the kernel's MIBs, sockets and conntrack alone");
	res = calloc(1, sizeof(*res));
	if (!res || snapshot_diag_input(&t->base, &end,
					end.mono - t->base.mono, &w, &in)) {
		err = fail("run", -ENOMEM);
		goto out;
	}
	/* exactly the run's window: rows and events of it only */
	in.peers = NULL;
	in.listeners = NULL;
	if (!end.peers_err && !t->base.peers_err) {
		if (table_delta(&t->base.peers, &end.peers, &pd))
			goto nomem;
		in.peers = &pd;
	}
	if (!end.listeners_err && !t->base.listeners_err) {
		if (table_delta(&t->base.listeners, &end.listeners, &ld))
			goto nomem;
		in.listeners = &ld;
	}
	if (!end.events_err)
		events_since(&end.events, t->base.events_err ? NULL :
			     &t->base.events, r->start);
	diagnose_run(&in, res);
	*found |= res->n > 0;

	out_obj_open(o, NULL);
	out_str(o, "netns", "\nnetns %s\n", t->label);
	out_double(o, "window_s", NULL, in.secs);
	module_note(o, &end);
	out_text(o, "  counters that moved:%s\n",
		 moved(&w.mod, false) + moved(&w.mib, true) +
		 (end.have_ct ? moved(&w.ct, false) : 0) ? "" : " none");
	print_moved(o, "counters", &w.mod, false, "  ");
	print_moved(o, "mib", &w.mib, true, "  ");
	if (end.have_ct)
		print_moved(o, "conntrack", &w.ct, false, "  ");
	out_obj_open(o, "time_wait");
	print_gauge(o, "TIME_WAIT sockets", &t->tw);
	if (t->tw.have)
		out_text(o, "\n");
	out_obj_close(o);
	/* entries, not sockets: a NAT's table fills with flows it forwards */
	out_obj_open(o, "conntrack_entries");
	print_gauge(o, "conntrack entries", &t->ct);
	if (t->ct.have && end.have_ct && end.ct.have_max)
		out_u64(o, "max", " (max %llu)", end.ct.max);
	if (t->ct.have)
		out_text(o, "\n");
	out_obj_close(o);
	if (in.peers)
		print_rows(o, "peers", "peers", &pd);
	if (in.listeners)
		print_rows(o, "listeners", "listeners", &ld);
	print_unseen(o, &end);
	print_findings(o, res);
	print_no_evidence(o, res);
	print_caveats(o, res, "");
	out_obj_close(o);
	goto out;
nomem:
	err = fail("run", -ENOMEM);
out:
	table_free(&pd);
	table_free(&ld);
	free(res);
	diag_window_free(&w);
	snapshot_free(&end);
	return err;
}

/* @arg as a shell reads it back: as is if safe, else in single quotes. */
static void shell_quoted(struct out *o, const char *arg)
{
	const char *p;

	for (p = arg; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_@%+=:,./-", *p))
			break;
	if (*arg && !*p) {
		out_text(o, " %s", arg);
		return;
	}
	out_text(o, " '");
	for (p = arg; *p; p++) {
		if (*p == '\'')
			out_text(o, "'\\''");
		else
			out_text(o, "%c", *p);
	}
	out_text(o, "'");
}

/* The report of every netns into @f; EXIT_RUNTIME if one could not be read. */
static int report(const struct opts *opt, struct run *r, FILE *f,
		  bool *found)
{
	int code = -1, sig = 0, rc = EXIT_OK;
	struct out o;
	size_t i;

	if (WIFEXITED(r->status))
		code = WEXITSTATUS(r->status);
	else if (WIFSIGNALED(r->status))
		sig = WTERMSIG(r->status);
	out_init(&o, f, opt->json);
	o.pretty = opt->pretty;
	out_obj_open(&o, NULL);
	out_text(&o, "tcptw run:");
	out_arr_open(&o, "command");
	for (i = 0; i < (size_t)opt->cmd_argc; i++) {
		out_str(&o, NULL, NULL, opt->cmd_argv[i]);
		shell_quoted(&o, opt->cmd_argv[i]);
	}
	out_arr_close(&o);
	out_double(&o, "start", NULL, r->start);
	if (sig) {
		out_text(&o, ": killed by signal %d (%s)", sig, strsignal(sig));
		out_null(&o, "exit_code", NULL);
		out_s64(&o, "signal", NULL, sig);
	} else {
		out_s64(&o, "exit_code", ": exit %lld", code);
		out_null(&o, "signal", NULL);
	}
	out_double(&o, "duration", NULL, r->secs);
	out_text(&o, " after %.1f s%s\n", r->secs,
		 r->sig.interrupted ? " (interrupted)" : "");
	out_bool(&o, "interrupted", NULL, r->sig.interrupted);
	out_arr_open(&o, "namespaces");
	for (i = 0; i < r->n; i++)
		if (report_target(&o, r, &r->t[i], found))
			rc = EXIT_RUNTIME;
	out_arr_close(&o);
	out_obj_close(&o);
	return rc;
}

/*
 * The report, written whole once it is complete: on stderr, as perf
 * stat's and time's (stdout is CMD's), or to -o FILE. -j: one JSON
 * object, never part of one.
 */
int run_report_write(const struct opts *opt, struct run *r, bool *found)
{
	FILE *dst = r->out ? r->out : stderr;
	size_t len = 0;
	char *buf = NULL;
	FILE *mem;
	int rc;

	mem = open_memstream(&buf, &len);
	if (!mem)
		return fail("run", errno);
	rc = report(opt, r, mem, found);
	if (fclose(mem)) {
		free(buf);
		return fail("run", errno);
	}
	errno = 0;
	if (fwrite(buf, 1, len, dst) != len || fflush(dst) || ferror(dst)) {
		free(buf);
		return fail(opt->output ? opt->output : "write to stderr",
			    errno ? errno : EIO);
	}
	free(buf);
	if (r->out) {
		r->out = NULL;
		if (fclose(dst))
			return fail(opt->output, errno);
	}
	return rc;
}
