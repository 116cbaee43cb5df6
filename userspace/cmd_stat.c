// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw stat: counters, MIBs, conntrack and sysctls of one sample. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "counters.h"
#include "proc.h"
#include "sysctl.h"

static void ctr_line(struct out *o, const char *name, uint64_t v)
{
	out_text(o, "  %-32s %20llu\n", name, (unsigned long long)v);
	out_u64(o, name, NULL, v);
}

static void print_ct(struct out *o, const struct snapshot *s)
{
	size_t i;

	out_obj_open(o, "conntrack");
	if (!s->have_ct) {
		out_text(o, "conntrack: not available (nf_conntrack not loaded in this netns)\n");
		out_bool(o, "available", NULL, false);
		out_obj_close(o);
		return;
	}
	out_text(o, "conntrack (%s)\n", s->ct.source);
	out_str(o, "source", NULL, s->ct.source);
	if (s->ct.have_count)
		ctr_line(o, "entries", s->ct.count);
	if (s->ct.have_max)
		ctr_line(o, "max", s->ct.max);
	out_obj_open(o, "stats");
	for (i = 0; i < s->ct.stats.n; i++)
		ctr_line(o, s->ct.stats.v[i].name, s->ct.stats.v[i].val);
	out_obj_close(o);
	/* what fills the table, as tcptw conntrack shows it */
	if (s->have_ctc)
		print_ct_census(o, &s->ctc, "  ");
	else
		/* ENOENT: a fixture tree, which has no table to dump */
		out_str(o, "census_error", "  entries not dumped: %s\n",
			s->ctc_err == -ENOENT ? "no table under TCPTW_PROC_ROOT" :
			strerror(-s->ctc_err));
	out_obj_close(o);
}

static void print_sysctls(struct out *o, const struct snapshot *s)
{
	int id;

	out_text(o, "sysctls\n");
	out_obj_open(o, "sysctl");
	for (id = 0; id < SC_NR; id++) {
		if (!s->sys.have[id])
			continue;
		out_text(o, "  %-32s %20lld\n", sysctl_name(id), s->sys.v[id]);
		out_s64(o, sysctl_name(id), NULL, s->sys.v[id]);
	}
	out_obj_close(o);
}

/*
 * A hook that skipped calls (a kretprobe out of instances, a kprobe that
 * hit inside another): the counters it feeds are low by that much. Said
 * in the data ("probes": missed calls per hook, only those that missed)
 * and, once per run, on stderr: never silent.
 */
static void print_probes_missed(struct out *o)
{
	struct ctrset p = { 0 };
	static bool said;
	uint64_t total = 0;
	char *buf;
	size_t i;

	buf = tcptw_read(TCPTW_DIR "/probes", NULL);
	if (!buf)
		return;
	if (ctr_parse_probes(&p, buf) < 0)
		goto out;
	for (i = 0; i < p.n; i++)
		total += p.v[i].val;
	out_obj_open(o, "probes");
	out_u64(o, "missed", NULL, total);
	if (total) {
		out_text(o, "probes: %llu hook calls missed, %s\n",
			 (unsigned long long)total,
			 "the counters they feed are low by as much");
		out_obj_open(o, "hooks");
		for (i = 0; i < p.n; i++)
			if (p.v[i].val)
				ctr_line(o, p.v[i].name, p.v[i].val);
		out_obj_close(o);
		if (!said) {
			said = true;
			fprintf(stderr, "tcptw: warning: %llu hook calls %s\n",
				(unsigned long long)total,
				"missed (/proc/net/tcptw/probes, 4th column): counters are low");
		}
	}
	out_obj_close(o);
out:
	ctrset_free(&p);
	free(buf);
}

static int stat_one(const struct opts *opt, const char *label, void *arg)
{
	struct snapshot s;
	struct out o;
	size_t i;

	(void)arg;
	snapshot_take(&s, SNAP_CT | SNAP_CTCENSUS);
	if (s.mib_err) {
		snapshot_free(&s);
		return fail("/proc/net/netstat", s.mib_err);
	}
	module_hint_once(&s,
			 "showing what the kernel alone offers: MIBs, sysctls, conntrack");
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_obj_open(&o, NULL);
	print_header(&o, label, s.ts);
	module_note(&o, &s);
	if (s.module && !s.mod_err) {
		print_probes_missed(&o);
		out_text(&o, "tcptw counters\n");
		out_obj_open(&o, "counters");
		for (i = 0; i < s.mod.n; i++)
			ctr_line(&o, s.mod.v[i].name, s.mod.v[i].val);
		out_obj_close(&o);
	}
	out_text(&o, "kernel MIBs\n");
	out_obj_open(&o, "mib");
	for (i = 0; i < s.mib.n; i++)
		if (mib_relevant(s.mib.v[i].name))
			ctr_line(&o, s.mib.v[i].name, s.mib.v[i].val);
	out_obj_close(&o);
	print_ct(&o, &s);
	print_sysctls(&o, &s);
	out_obj_close(&o);
	snapshot_free(&s);
	return EXIT_OK;
}

int cmd_stat(const struct opts *opt)
{
	return each_netns(opt, stat_one, NULL);
}
