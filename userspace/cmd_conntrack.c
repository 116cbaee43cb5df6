// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * tcptw conntrack: what fills the conntrack table, from a streaming dump;
 * with conntrack(8)'s filters, only the entries they match. -C: the count
 * alone, nf_conntrack_count without a dump unless filtered.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* -C: "entries N of max M", or with a filter the entries it matches */
static void print_count(struct out *o, const struct snapshot *s,
			const struct ct_census *c, bool filtered)
{
	if (filtered) {
		out_u64(o, "entries", "entries %llu matching", c->total);
		out_u64(o, "dumped", " (counted by a dump of %llu)",
			c->dumped);
		out_str(o, "counted", NULL, "dump");
	} else {
		out_u64(o, "entries", "entries %llu", s->ct.count);
		out_str(o, "counted", NULL, "nf_conntrack_count");
	}
	if (s->ct.have_max)
		out_u64(o, "max", " of max %llu", s->ct.max);
	out_text(o, "\n");
}

static int conntrack_one(const struct opts *opt, const char *label, void *arg)
{
	bool filtered = opt->ct_filter.set;
	/* -C alone reads the count; a filter needs every entry seen */
	bool dump = !opt->ct_count_only || filtered;
	struct ct_census ctc;
	struct snapshot s;
	int ctc_err = -ENOENT;
	struct out o;
	int rc = EXIT_OK;

	(void)arg;
	memset(&ctc, 0, sizeof(ctc));
	snapshot_take(&s, SNAP_CT);
	/* a fixture tree has no table to dump (as snapshot_take) */
	if (dump && s.have_ct && !getenv("TCPTW_PROC_ROOT")) {
		ctc_err = ct_census_init(&ctc);
		if (!ctc_err) {
			ctc.filter = filtered ? &opt->ct_filter : NULL;
			ctc_err = ct_census_collect(&ctc);
		}
	}
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_obj_open(&o, NULL);
	print_header(&o, label, s.ts);
	out_obj_open(&o, "conntrack");
	print_ctc_filter(&o, &opt->ct_filter);
	if (!s.have_ct) {
		out_text(&o, "conntrack: not available (nf_conntrack not loaded in this netns)\n");
		out_bool(&o, "available", NULL, false);
	} else if (opt->ct_count_only && (filtered ? !ctc_err :
					  s.ct.have_count)) {
		print_count(&o, &s, &ctc, filtered);
	} else if (opt->ct_count_only) {
		if (dump)
			out_str(&o, "error", NULL, strerror(-ctc_err));
	} else {
		if (s.ct.have_count)
			out_u64(&o, "entries", "entries %llu", s.ct.count);
		if (s.ct.have_max)
			out_u64(&o, "max", " of max %llu", s.ct.max);
		out_text(&o, "\n");
		if (!ctc_err)
			print_ct_census_top(&o, &ctc, "", opt->ct_top);
		else
			out_str(&o, "error", NULL, strerror(-ctc_err));
	}
	out_obj_close(&o);
	out_obj_close(&o);
	if (s.have_ct && opt->ct_count_only && !dump && !s.ct.have_count)
		rc = fail("nf_conntrack_count", ENOENT);
	else if (s.have_ct && dump && ctc_err)
		rc = fail(ctc_err == -EPERM ?
			  "conntrack dump (needs CAP_NET_ADMIN over the netns)" :
			  "conntrack dump", ctc_err);
	ct_census_free(&ctc);
	snapshot_free(&s);
	return rc;
}

int cmd_conntrack(const struct opts *opt)
{
	return each_netns(opt, conntrack_one, NULL);
}
