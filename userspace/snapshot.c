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
	FILE *f = fopen(path, "we");
	size_t n = 0;
	int err = 0;

	if (!f)
		return -errno;
	fprintf(f, "%s\n", SNAPSHOT_VERSION_LINE);
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
	/* the write's own error (ENOSPC), not EIO: flushed while it is known */
	errno = 0;
	if (fflush(f) || ferror(f))
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* "1234", "1234.5": decimal seconds since 2000, not in 10 years' time. */
static bool parse_ts(const char *v, double *ts)
{
	size_t n = strspn(v, "0123456789");
	char *end;

	if (!n)
		return false;
	if (v[n] == '.')
		n += 1 + strspn(v + n + 1, "0123456789");
	if (v[n])
		return false;
	errno = 0;
	*ts = strtod(v, &end);
	return !errno && !*end && *ts >= 946684800.0 &&
	       *ts < snapshot_clock(CLOCK_REALTIME) + 86400.0 * 3650;
}

static bool parse_u64(const char *v, uint64_t *x)
{
	unsigned long long u;
	char *end;

	if (!*v || strspn(v, "0123456789") != strlen(v))
		return false;
	errno = 0;
	u = strtoull(v, &end, 10);
	*x = u;
	return !errno && !*end;
}

/* A header word: non-empty, printable, no space. */
static bool header_ok(const char *v, size_t max)
{
	const char *p;

	if (!*v || strlen(v) >= max)
		return false;
	for (p = v; *p; p++)
		if (*p <= ' ' || *p > '~')
			return false;
	return true;
}

/*
 * One line of a baseline into @s or @all; false and why in @why if it is
 * not one. @seen: the headers so far (bits in line order).
 */
enum { H_TS = 1, H_NETNS = 2, H_BOOT = 4, H_END = 8 };

static bool load_line(struct snapshot *s, struct ctrset *all, char *line,
		      unsigned int *seen, uint64_t *end, char *why, size_t len)
{
	char *key = line, *val, *extra;
	uint64_t v;

	val = key + strcspn(key, " \t");
	if (*val)
		*val++ = '\0';
	val += strspn(val, " \t");
	extra = val + strcspn(val, " \t");
	if (*extra && extra[strspn(extra, " \t")]) {
		snprintf(why, len, "'%.40s' has more than a name and a value",
			 key);
		return false;
	}
	*extra = '\0';
	if (*seen & H_END) {
		snprintf(why, len, "'%.40s' after the #end line", key);
		return false;
	}
	if (*key == '#') {
		unsigned int h = !strcmp(key, "#ts") ? H_TS :
				 !strcmp(key, "#netns") ? H_NETNS :
				 !strcmp(key, "#boot_id") ? H_BOOT :
				 !strcmp(key, "#end") ? H_END : 0;

		if (!h) {
			snprintf(why, len, "unknown line '%.40s'", key);
			return false;
		}
		if (*seen & h) {
			snprintf(why, len, "two %s lines", key);
			return false;
		}
		*seen |= h;
		if (h == H_TS && !parse_ts(val, &s->ts)) {
			snprintf(why, len, "#ts '%.40s' is not a time: decimal seconds since 2000",
				 val);
			return false;
		}
		if ((h == H_NETNS || h == H_BOOT) &&
		    !header_ok(val, h == H_NETNS ? sizeof(s->netns_id) :
			       sizeof(s->boot_id))) {
			snprintf(why, len, "%s '%.40s' is not an id", key, val);
			return false;
		}
		/* header_ok() checked the length */
		if (h == H_NETNS && strcmp(val, "-"))
			memcpy(s->netns_id, val, strlen(val) + 1);
		if (h == H_BOOT && strcmp(val, "-"))
			memcpy(s->boot_id, val, strlen(val) + 1);
		if (h == H_END && !parse_u64(val, end)) {
			snprintf(why, len, "#end '%.40s' is not a count", val);
			return false;
		}
		return true;
	}
	if (!(*seen & H_TS)) {
		snprintf(why, len, "'%.40s' before the #ts line", key);
		return false;
	}
	if (strncmp(key, "tcptw.", 6) && strncmp(key, "mib.", 4) &&
	    strncmp(key, "ct.", 3) && strncmp(key, "hist.", 5)) {
		snprintf(why, len, "'%.40s' is no counter tcptw saves", key);
		return false;
	}
	if (!parse_u64(val, &v)) {
		snprintf(why, len, "counter %.40s: '%.40s' is not a number",
			 key, val);
		return false;
	}
	return !ctrset_add(all, key, v) ||
	       (snprintf(why, len, "%s", strerror(ENOMEM)), false);
}

/* The file, whole, NUL-terminated; -errno (EISDIR for a directory). */
static int read_all(const char *path, char **out, size_t *outlen)
{
	size_t cap = 1 << 20, len;
	char *buf;
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = malloc(cap + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	errno = 0;
	len = fread(buf, 1, cap, f);
	if (ferror(f)) {
		err = errno ? -errno : -EIO;
		goto bad;
	}
	if (len == cap && fgetc(f) != EOF) {
		err = -EFBIG;
		goto bad;
	}
	buf[len] = '\0';
	fclose(f);
	*out = buf;
	*outlen = len;
	return 0;
bad:
	fclose(f);
	free(buf);
	return err;
}

int snapshot_load(struct snapshot *s, const char *path, char *why,
		  size_t len)
{
	struct ctrset all = { 0 };
	unsigned int seen = 0;
	char *buf = NULL, *p, *line;
	uint64_t end = 0;
	bool versioned;
	size_t i, n = 0;
	int err;

	memset(s, 0, sizeof(*s));
	*why = '\0';
	err = read_all(path, &buf, &n);
	if (err)
		return err;
	err = -EINVAL;
	if (strlen(buf) != n) {
		snprintf(why, len, "%s", "holds a NUL byte: not text");
		goto out;
	}
	p = buf;
	versioned = !strncmp(p, SNAPSHOT_VERSION_LINE "\n",
			     strlen(SNAPSHOT_VERSION_LINE) + 1);
	if (versioned) {
		p += strlen(SNAPSHOT_VERSION_LINE) + 1;
	} else if (!strncmp(p, "#tcptw-baseline ", 16)) {
		snprintf(why, len, "%s", "is of a newer format than this tcptw reads");
		goto out;
	} else if (strncmp(p, "#ts ", 4)) {
		snprintf(why, len, "%s", "has no '" SNAPSHOT_VERSION_LINE "' line");
		goto out;
	}
	/* cut within a line: that line is not read, and #end is missing */
	if (n && buf[n - 1] != '\n') {
		line = strrchr(p, '\n');
		if (line)
			line[1] = '\0';
		else
			*p = '\0';
	}
	while ((line = strsep(&p, "\n"))) {
		if (!*line && !p)
			break;
		if (!load_line(s, &all, line, &seen, &end, why, len))
			goto out;
	}
	if (!(seen & H_TS)) {
		snprintf(why, len, "%s", "has no #ts line");
		goto out;
	}
	if (!all.n) {
		snprintf(why, len, "%s", "has no counters");
		goto out;
	}
	if (versioned && (seen & (H_NETNS | H_BOOT)) != (H_NETNS | H_BOOT)) {
		snprintf(why, len, "%s", "lacks its #netns or #boot_id line");
		goto out;
	}
	err = 0;
	/* complete: "#end N" and exactly N counters before it */
	s->complete = (seen & H_END) && end == all.n;
	for (i = 0; i < all.n; i++) {
		const char *nm = all.v[i].name;
		uint64_t v = all.v[i].val;

		if (!strncmp(nm, "tcptw.", 6))
			err = ctrset_add(&s->mod, nm + 6, v);
		else if (!strncmp(nm, "mib.", 4))
			err = ctrset_add(&s->mib, nm + 4, v);
		else if (!strncmp(nm, "ct.", 3))
			err = ctrset_add(&s->ct.stats, nm + 3, v);
		else
			err = ctrset_add(&s->histc, nm + 5, v);
		if (err)
			break;
	}
	s->module = s->mod.n > 0;
	s->have_ct = s->ct.stats.n > 0;
	s->ct.have_stats = s->have_ct;
	s->census_err = -ENOENT;
	s->events_err = -ENOENT;
	s->peers_err = -ENOENT;
	s->listeners_err = -ENOENT;
	s->hist_err = -ENOENT;
out:
	ctrset_free(&all);
	free(buf);
	if (err)
		snapshot_free(s);
	return err;
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
