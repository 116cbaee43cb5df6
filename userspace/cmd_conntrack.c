// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw conntrack: what fills the conntrack table, from a streaming dump. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static int conntrack_one(const struct opts *opt, const char *label, void *arg)
{
	struct snapshot s;
	struct out o;
	int rc = EXIT_OK;

	(void)arg;
	snapshot_take(&s, SNAP_CT | SNAP_CTCENSUS);
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_obj_open(&o, NULL);
	print_header(&o, label, s.ts);
	out_obj_open(&o, "conntrack");
	if (!s.have_ct) {
		out_text(&o, "conntrack: not available (nf_conntrack not loaded in this netns)\n");
		out_bool(&o, "available", NULL, false);
	} else {
		if (s.ct.have_count)
			out_u64(&o, "entries", "entries %llu", s.ct.count);
		if (s.ct.have_max)
			out_u64(&o, "max", " of max %llu", s.ct.max);
		out_text(&o, "\n");
		if (s.have_ctc)
			print_ct_census(&o, &s.ctc, "");
		else
			out_str(&o, "error", NULL, strerror(-s.ctc_err));
	}
	out_obj_close(&o);
	out_obj_close(&o);
	if (s.have_ct && !s.have_ctc)
		rc = fail(s.ctc_err == -EPERM ?
			  "conntrack dump (needs CAP_NET_ADMIN over the netns)" :
			  "conntrack dump", s.ctc_err);
	snapshot_free(&s);
	return rc;
}

int cmd_conntrack(const struct opts *opt)
{
	return each_netns(opt, conntrack_one, NULL);
}
