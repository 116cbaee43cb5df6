// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "snapshot.h"

double snapshot_clock(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double tick_next(double next, double now, double interval)
{
	next += interval;
	if (next <= now)
		next += (floor((now - next) / interval) + 1) * interval;
	return next;
}

bool mib_relevant(const char *name)
{
	static const char *const prefixes[] = {
		"TcpExtPAWS", "TcpExtTW", "TcpExtTCPTimeWaitOverflow",
		"TcpExtListenOverflows", "TcpExtListenDrops",
		"TcpExtSyncookies", "TcpExtTCPSynRetrans",
		"TcpExtTCPReqQFull", "TcpExtTSEcrRejected",
		"TcpExtTCPACKSkippedTimeWait", "TcpExtTCPACKSkippedPAWS",
		"TcpExtTCPAbortOnTimeout", "TcpActiveOpens",
		"TcpPassiveOpens", "TcpAttemptFails", "TcpEstabResets",
		"TcpOutRsts",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static int read_counters(const char *rel, struct ctrset *s, bool table)
{
	char *buf = tcptw_read(rel, NULL);
	int n;

	if (!buf)
		return -errno;
	n = table ? ctr_parse_table(s, buf) : ctr_parse_snmp6(s, buf, NULL);
	free(buf);
	return n < 0 ? n : 0;
}

static int read_table(const char *rel, struct table *t)
{
	char *buf = tcptw_read(rel, NULL);
	int n;

	if (!buf)
		return -errno;
	n = table_parse(buf, t);
	free(buf);
	return n < 0 ? n : 0;
}

/* Every bucket of @t as a counter "<histogram>.<le_ms bound>" in @c. */
static void hist_counters(const struct table *t, struct ctrset *c)
{
	char name[CTR_NAME_MAX];
	size_t r, col;

	for (r = 0; r < t->nrows; r++)
		for (col = 1; col < t->ncols; col++) {
			if (t->rows[r].v[col] == TBL_NONE ||
			    snprintf(name, sizeof(name), "%s.%s",
				     t->rows[r].key, t->cols[col]) >=
			    (int)sizeof(name))
				continue;
			ctrset_add(c, name, t->rows[r].v[col]);
		}
}

/* Which netns and which boot the counters belong to. */
static void read_ids(struct snapshot *s)
{
	ssize_t n;
	char *buf;

	n = readlink("/proc/self/ns/net", s->netns_id,
		     sizeof(s->netns_id) - 1);
	s->netns_id[n > 0 ? n : 0] = '\0';
	buf = tcptw_read("sys/kernel/random/boot_id", NULL);
	if (buf) {
		buf[strcspn(buf, " \t\n")] = '\0';
		snprintf(s->boot_id, sizeof(s->boot_id), "%s", buf);
		free(buf);
	}
}

int snapshot_take(struct snapshot *s, unsigned int what)
{
	char *buf;
	int n;

	memset(s, 0, sizeof(*s));
	read_ids(s);
	s->ts = snapshot_clock(CLOCK_REALTIME);
	s->mono = snapshot_clock(CLOCK_MONOTONIC);
	s->module = tcptw_module_loaded();
	s->mod_err = s->module ? read_counters(TCPTW_DIR "/counters", &s->mod,
					       false) : -ENOENT;
	s->mib_err = read_counters("net/netstat", &s->mib, true);
	n = read_counters("net/snmp", &s->mib, true);
	if (!s->mib_err)
		s->mib_err = n;
	sysctls_read(&s->sys);
	if (what & SNAP_CT)
		s->have_ct = !ct_read(&s->ct);
	s->ctc_err = -ENOENT;
	/* a fixture tree has no table to dump either */
	if ((what & SNAP_CTCENSUS) && s->have_ct && !getenv("TCPTW_PROC_ROOT")) {
		s->ctc_err = ct_census_init(&s->ctc);
		if (!s->ctc_err)
			s->ctc_err = ct_census_collect(&s->ctc);
		s->have_ctc = !s->ctc_err;
	}
	if (what & SNAP_CENSUS) {
		census_init(&s->census,
			    sysctl_get(&s->sys, SC_PORT_RANGE_LO, 32768),
			    sysctl_get(&s->sys, SC_PORT_RANGE_HI, 60999));
		/* a fixture tree has no sockets to dump */
		if (getenv("TCPTW_PROC_ROOT")) {
			s->census_err = -ENOENT;
			s->census.why = "no census under TCPTW_PROC_ROOT";
		} else {
			s->census_err = census_collect(&s->census);
		}
		s->have_census = !s->census_err;
	}
	s->events_err = -ENOENT;
	s->peers_err = -ENOENT;
	s->listeners_err = -ENOENT;
	s->hist_err = -ENOENT;
	if ((what & SNAP_TABLES) && s->module) {
		buf = tcptw_read(TCPTW_DIR "/events", NULL);
		if (buf) {
			n = events_parse(buf, &s->events);
			s->events_err = n < 0 ? n : 0;
			free(buf);
		} else {
			s->events_err = -errno;
		}
		s->peers_err = read_table(TCPTW_DIR "/peers", &s->peers);
		s->listeners_err = read_table(TCPTW_DIR "/listeners",
					      &s->listeners);
	}
	if ((what & (SNAP_HIST | SNAP_HISTCTR)) && s->module) {
		s->hist_err = read_table(TCPTW_DIR "/hist", &s->hist);
		if (!s->hist_err && (what & SNAP_HISTCTR))
			hist_counters(&s->hist, &s->histc);
	}
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	ctrset_free(&s->mod);
	ctrset_free(&s->mib);
	ctrset_free(&s->histc);
	if (s->have_ct)
		ct_free(&s->ct);
	census_free(&s->census);
	ct_census_free(&s->ctc);
	events_free(&s->events);
	table_free(&s->peers);
	table_free(&s->listeners);
	table_free(&s->hist);
}

static size_t save_set(FILE *f, const char *prefix, const struct ctrset *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		fprintf(f, "%s%-40s\t%llu\n", prefix, c->v[i].name,
			(unsigned long long)c->v[i].val);
	return c->n;
}

int snapshot_save(const struct snapshot *s, const char *path)
{
	FILE *f = fopen(path, "w");
	size_t n = 0;

	if (!f)
		return -errno;
	fprintf(f, "#ts %.3f\n", s->ts);
	fprintf(f, "#netns %s\n", *s->netns_id ? s->netns_id : "-");
	fprintf(f, "#boot_id %s\n", *s->boot_id ? s->boot_id : "-");
	n += save_set(f, "tcptw.", &s->mod);
	n += save_set(f, "mib.", &s->mib);
	if (s->have_ct)
		n += save_set(f, "ct.", &s->ct.stats);
	n += save_set(f, "hist.", &s->histc);
	/* the last line: a file cut short lacks it */
	fprintf(f, "#end %zu\n", n);
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

/* The word after "\n#<key> " (or at the start) into @dst, "-": empty. */
static void header_word(const char *buf, const char *key, char *dst,
			size_t len)
{
	const char *p = buf;
	size_t klen = strlen(key), n;

	dst[0] = '\0';
	for (; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (p[0] != '#' || strncmp(p + 1, key, klen) || p[1 + klen] != ' ')
			continue;
		p += 2 + klen;
		n = strcspn(p, " \t\n");
		if (n < len && !(n == 1 && *p == '-')) {
			memcpy(dst, p, n);
			dst[n] = '\0';
		}
		return;
	}
}

int snapshot_load(struct snapshot *s, const char *path)
{
	struct ctrset all = { 0 };
	char *buf, *ts, end[24];
	size_t i;
	int n;

	memset(s, 0, sizeof(*s));
	buf = malloc(1 << 20);
	if (!buf)
		return -ENOMEM;
	{
		FILE *f = fopen(path, "r");
		size_t len;

		if (!f) {
			n = -errno;
			free(buf);
			return n;
		}
		len = fread(buf, 1, (1 << 20) - 1, f);
		buf[len] = '\0';
		fclose(f);
	}
	ts = strstr(buf, "#ts ");
	if (!ts || sscanf(ts + 4, "%lf", &s->ts) != 1) {
		free(buf);
		return -EINVAL;
	}
	header_word(buf, "netns", s->netns_id, sizeof(s->netns_id));
	header_word(buf, "boot_id", s->boot_id, sizeof(s->boot_id));
	header_word(buf, "end", end, sizeof(end));
	n = ctr_parse_snmp6(&all, buf, NULL);
	free(buf);
	if (n < 0)
		return n;
	/* complete: "#end N" and exactly N counters before it */
	s->complete = *end && strtoull(end, NULL, 10) == all.n &&
		      strspn(end, "0123456789") == strlen(end);
	for (i = 0; i < all.n; i++) {
		const char *nm = all.v[i].name;
		uint64_t v = all.v[i].val;

		if (!strncmp(nm, "tcptw.", 6))
			ctrset_add(&s->mod, nm + 6, v);
		else if (!strncmp(nm, "mib.", 4))
			ctrset_add(&s->mib, nm + 4, v);
		else if (!strncmp(nm, "ct.", 3))
			ctrset_add(&s->ct.stats, nm + 3, v);
		else if (!strncmp(nm, "hist.", 5))
			ctrset_add(&s->histc, nm + 5, v);
	}
	ctrset_free(&all);
	s->module = s->mod.n > 0;
	s->have_ct = s->ct.stats.n > 0;
	s->ct.have_stats = s->have_ct;
	s->census_err = -ENOENT;
	s->events_err = -ENOENT;
	s->peers_err = -ENOENT;
	s->listeners_err = -ENOENT;
	s->hist_err = -ENOENT;
	return 0;
}

enum baseline_verdict baseline_check(const struct snapshot *base,
				     const struct snapshot *cur, double now,
				     char *why, size_t len)
{
	/* a clock a few seconds apart (another host's NTP) is no future */
	if (base->ts > now + 5) {
		snprintf(why, len, "is dated %.1f s in the future",
			 base->ts - now);
		return BASE_FUTURE;
	}
	if (!*base->netns_id && !*base->boot_id) {
		snprintf(why, len, "%s",
			 "has no netns or boot id (saved by an older tcptw): not checked");
		return BASE_OLD_FORMAT;
	}
	if (!base->complete) {
		snprintf(why, len, "%s",
			 "is truncated (its #end line is missing or does not match)");
		return BASE_TRUNCATED;
	}
	if (*base->boot_id && *cur->boot_id &&
	    strcmp(base->boot_id, cur->boot_id)) {
		snprintf(why, len, "%s",
			 "was saved before the last reboot: the counters restarted since");
		return BASE_OTHER_BOOT;
	}
	if (*base->netns_id && *cur->netns_id &&
	    strcmp(base->netns_id, cur->netns_id)) {
		snprintf(why, len, "was saved in netns %s, this is %s",
			 base->netns_id, cur->netns_id);
		return BASE_OTHER_NETNS;
	}
	*why = '\0';
	return BASE_OK;
}

int snapshot_diag_input(const struct snapshot *base,
			const struct snapshot *cur, double secs,
			struct diag_window *w, struct diag_input *in)
{
	const struct ctrset none = { 0 };

	memset(w, 0, sizeof(*w));
	memset(in, 0, sizeof(*in));
	if (ctr_diff(&base->mod, &cur->mod, secs, &w->mod) ||
	    ctr_diff(&base->mib, &cur->mib, secs, &w->mib) ||
	    ctr_diff(base->have_ct ? &base->ct.stats : NULL,
		     cur->have_ct ? &cur->ct.stats : &none, secs, &w->ct) ||
	    ctr_diff(&base->histc, &cur->histc, secs, &w->hist)) {
		diag_window_free(w);
		return -ENOMEM;
	}
	in->secs = secs;
	in->module = cur->module;
	in->mod = &w->mod;
	in->mib = &w->mib;
	in->hist = &w->hist;
	/* a module that has the histogram: its buckets, even if all 0 */
	in->idle_hist = ctrset_find(&cur->histc, "rst_received_idle.+Inf");
	in->ct = cur->have_ct ? &w->ct : NULL;
	in->sys = &cur->sys;
	in->ct_have_count = cur->have_ct && cur->ct.have_count &&
			    cur->ct.have_max;
	in->ct_count = cur->ct.count;
	in->ct_max = cur->ct.max;
	in->census = cur->have_census ? &cur->census : NULL;
	in->ctc = cur->have_ctc ? &cur->ctc : NULL;
	in->events = cur->events_err ? NULL : &cur->events;
	in->events_err = cur->events_err;
	in->peers = cur->peers_err ? NULL : &cur->peers;
	in->listeners = cur->listeners_err ? NULL : &cur->listeners;
	return 0;
}

void diag_window_free(struct diag_window *w)
{
	deltaset_free(&w->mod);
	deltaset_free(&w->mib);
	deltaset_free(&w->ct);
	deltaset_free(&w->hist);
}
