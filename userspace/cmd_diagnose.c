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
		char why[160];

		err = snapshot_load(base, opt->baseline, why, sizeof(why));
		if (err == -EINVAL && *why) {
			fprintf(stderr, "tcptw: %s: not a tcptw baseline file: %s\n",
				opt->baseline, why);
			return EXIT_RUNTIME;
		}
		if (err)
			return fail(opt->baseline, err);
	} else {
		snapshot_take(base, SNAP_CT | SNAP_HISTCTR);
		if (opt->since > 0 && !sleep_interruptible(opt->since))
			*cut = true;
	}
	snapshot_take(cur, (SNAP_ALL & ~SNAP_HIST) | SNAP_CTCENSUS);
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
	int err;

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
	print_findings(&o, r);
	print_no_evidence(&o, r);
	print_caveats(&o, r, "");
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
