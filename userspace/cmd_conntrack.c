// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw conntrack: what fills the conntrack table, from a streaming dump. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "ct_census.h"

/* Sources and destinations shown */
#define CT_TOP 10

static void print_top(struct out *o, const char *key, const char *title,
		      const struct ctc_top *t, bool dst)
{
	const struct ctc_slot *top[CT_TOP];
	size_t i, n = ct_census_top(t, top, CT_TOP);
	const char *pn;
	char ep[80];

	out_text(o, "%s\n", title);
	out_arr_open(o, key);
	for (i = 0; i < n; i++) {
		ctc_key_str(&top[i]->k, ep, sizeof(ep));
		out_obj_open(o, NULL);
		if (dst) {
			pn = ct_proto_name(top[i]->k.proto);
			if (pn)
				out_str(o, "proto", "  %-7s ", pn);
			else
				out_u64(o, "proto", "  %-7llu ", top[i]->k.proto);
			out_str(o, "endpoint", "%-24s", ep);
		} else {
			out_str(o, "endpoint", "  %-32s", ep);
		}
		out_u64(o, "entries", " %12llu\n", top[i]->n);
		out_obj_close(o);
	}
	out_arr_close(o);
	/* more endpoints than the bounded table counts: said, not dropped */
	out_u64(o, dst ? "untracked_destinations" : "untracked_sources",
		t->untracked ? "  (+%llu entries of endpoints not counted one by one)\n" :
		NULL, t->untracked);
}

void print_ct_census(struct out *o, const struct ct_census *c)
{
	unsigned int i;
	char name[16];
	const char *pn;

	out_obj_open(o, "census");
	out_u64(o, "dumped", "entries dumped %llu\n", c->total);
	out_text(o, "by protocol\n");
	out_obj_open(o, "protocols");
	for (i = 0; i < 256; i++) {
		if (!c->proto[i])
			continue;
		pn = ct_proto_name(i);
		if (!pn) {
			snprintf(name, sizeof(name), "%u", i);
			pn = name;
		}
		out_text(o, "  %-32s %12llu\n", pn,
			 (unsigned long long)c->proto[i]);
		out_u64(o, pn, NULL, c->proto[i]);
	}
	out_obj_close(o);
	out_text(o, "tcp by state%-27s timeout\n", "");
	out_obj_open(o, "tcp_states");
	for (i = 0; i < CTC_TCP_STATES; i++) {
		if (!c->tcp_state[i])
			continue;
		out_obj_open(o, ct_tcp_state_name(i));
		out_u64(o, "entries", NULL, c->tcp_state[i]);
		out_text(o, "  %-32s %12llu", ct_tcp_state_name(i),
			 (unsigned long long)c->tcp_state[i]);
		if (c->timeout[i] >= 0) {
			out_s64(o, "timeout_s", " %8lld s", c->timeout[i]);
			out_str(o, "sysctl", " (%s)", ct_tcp_state_sysctl(i));
		}
		out_text(o, "\n");
		out_obj_close(o);
	}
	out_obj_close(o);
	out_text(o, "by zone\n");
	out_obj_open(o, "zones");
	for (i = 0; i < c->nzones; i++) {
		snprintf(name, sizeof(name), "%u", c->zone[i].zone);
		out_text(o, "  %-32s %12llu\n", name,
			 (unsigned long long)c->zone[i].n);
		out_u64(o, name, NULL, c->zone[i].n);
	}
	out_obj_close(o);
	if (c->zone_other)
		out_u64(o, "zones_other", "  other zones %llu\n", c->zone_other);
	print_top(o, "sources", "top sources", &c->src, false);
	print_top(o, "destinations", "top destinations", &c->dst, true);
	out_obj_close(o);
}

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
			print_ct_census(&o, &s.ctc);
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
