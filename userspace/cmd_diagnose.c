// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw diagnose: sample or compare with a baseline, print the findings. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "counters.h"
#include "diagnose.h"

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
