// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "netns.h"
#include "proc.h"
#include "prom.h"

/* lock-free, so safe to set from the signal handler */
atomic_int tcptw_stop;

static void on_stop(int sig)
{
	(void)sig;
	tcptw_stop = 1;
}

void install_stop_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	/* no SA_RESTART: nanosleep() returns at once on Ctrl-C */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool sleep_interruptible(double secs)
{
	struct timespec ts = {
		.tv_sec = (time_t)secs,
		.tv_nsec = (long)((secs - (time_t)secs) * 1e9),
	};

	while (!tcptw_stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return !tcptw_stop;
}

bool sleep_until(double deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)deadline,
		.tv_nsec = (long)((deadline - (time_t)deadline) * 1e9),
	};

	while (!tcptw_stop &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	return !tcptw_stop;
}

int fail(const char *what, int err)
{
	fprintf(stderr, "tcptw: %s: %s\n", what, strerror(err < 0 ? -err :
							   err));
	return EXIT_RUNTIME;
}

static const char hint[] =
	"tcptw.ko is not loaded: load it with \"sudo insmod tcptw.ko\" or \"sudo modprobe tcptw\"";

const char *module_hint(void)
{
	return hint;
}

/*
 * One shape in every command's JSON: "module":{"loaded":bool} plus
 * "error" when its counters could not be read. Notes for people go to
 * stderr, so stdout is the data alone.
 */
void module_note(struct out *o, const struct snapshot *s)
{
	out_obj_open(o, "module");
	out_bool(o, "loaded", NULL, s->module);
	if (s->module && s->mod_err) {
		out_str(o, "error", NULL, strerror(-s->mod_err));
		fprintf(stderr, "tcptw: /proc/net/tcptw/counters: %s\n",
			strerror(-s->mod_err));
	}
	out_obj_close(o);
}

/* Once per run: what is missing without the module, on stderr. */
void module_hint_once(const struct snapshot *s, const char *what)
{
	static bool said;

	if (s->module || said)
		return;
	said = true;
	fprintf(stderr, "tcptw: note: %s; %s\n", module_hint(), what);
}

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

static void header(struct out *o, const char *label, double ts)
{
	out_str(o, "netns", "netns %s\n", label);
	out_double(o, "ts", NULL, ts);
}

/*
 * Run @fn here, or with --all-netns in every netns in turn (setns, then
 * back): named ones first, then those of running processes. A netns that
 * cannot be entered is reported and skipped; the exit status says so.
 */
static int each_netns(const struct opts *opt,
		      int (*fn)(const struct opts *opt, const char *label,
				void *arg), void *arg)
{
	struct netns_list l;
	int self, err, rc = EXIT_OK, r;
	size_t i;

	if (!opt->all_netns)
		return fn(opt, opt->label, arg);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return fail("/proc/self/ns/net", errno);
	err = netns_list_all(&l);
	if (err) {
		close(self);
		return fail("listing network namespaces", err);
	}
	for (i = 0; i < l.n; i++) {
		err = netns_enter_fd(l.v[i].fd);
		if (err) {
			fprintf(stderr, "tcptw: setns %s: %s\n", l.v[i].label,
				strerror(-err));
			rc = EXIT_RUNTIME;
			continue;
		}
		r = fn(opt, l.v[i].label, arg);
		if (r != EXIT_OK)
			rc = r;
	}
	err = netns_enter_fd(self);
	close(self);
	netns_list_free(&l);
	return err ? fail("setns back", err) : rc;
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
	snapshot_take(&s, SNAP_CT);
	if (s.mib_err) {
		snapshot_free(&s);
		return fail("/proc/net/netstat", s.mib_err);
	}
	module_hint_once(&s,
			 "showing what the kernel alone offers: MIBs, sysctls, conntrack");
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_obj_open(&o, NULL);
	header(&o, label, s.ts);
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

/* Moved counters of one delta set, plain and JSON. */
static void print_moved(struct out *o, const char *key,
			const struct deltaset *d, bool mib)
{
	size_t i;

	out_obj_open(o, key);
	for (i = 0; i < d->n; i++) {
		const struct ctr_delta *c = &d->v[i];

		if (!c->delta || (c->flags & CTR_GONE))
			continue;
		if (mib && !mib_relevant(c->name))
			continue;
		out_text(o, "  %-32s %20llu %12.1f/s%s\n", c->name,
			 (unsigned long long)c->delta, c->rate,
			 c->flags & CTR_RESET ? " (reset)" :
			 c->flags & CTR_NEW ? " (new)" : "");
		out_obj_open(o, c->name);
		out_u64(o, "value", NULL, c->val);
		out_u64(o, "delta", NULL, c->delta);
		out_double(o, "rate", NULL, c->rate);
		out_obj_close(o);
	}
	out_obj_close(o);
}

static void print_census_totals(struct out *o, const struct snapshot *s)
{
	const struct census_ep *top;
	int st;

	if (!s->have_census)
		return;
	out_text(o, "  sockets:");
	out_obj_open(o, "sockets");
	for (st = 0; st < CS_OTHER; st++) {
		out_text(o, " %s %u", census_state_name(st),
			 s->census.total[st]);
		out_u64(o, census_state_name(st), NULL, s->census.total[st]);
	}
	if (census_top_ephemeral(&s->census, &top, 1, 0))
		out_text(o, "; busiest %s:%u holds %.1f%% of the port range",
			 top->addr, top->port,
			 100 * census_share(&s->census, top));
	out_text(o, "\n");
	out_obj_close(o);
}

/* One netns being watched: where it is and its previous sample. */
struct watched {
	int fd;			/* -1: the netns tcptw runs in */
	char label[128];
	struct snapshot prev;
	bool have_prev;
};

/* Print @w's interval from its previous sample to @cur; keeps @cur. */
static int watch_print(struct out *o, struct watched *w, struct snapshot *cur)
{
	struct deltaset dm, dk, dc = { 0 };
	const struct ctrset none = { 0 };
	struct snapshot *prev = &w->prev;
	char tbuf[32];
	double secs;
	struct tm tm;
	time_t t;

	secs = cur->mono - prev->mono;
	if (ctr_diff(&prev->mod, &cur->mod, secs, &dm) ||
	    ctr_diff(&prev->mib, &cur->mib, secs, &dk) ||
	    ctr_diff(prev->have_ct ? &prev->ct.stats : NULL,
		     cur->have_ct ? &cur->ct.stats : &none, secs, &dc))
		return -ENOMEM;
	t = (time_t)cur->ts;
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", localtime_r(&t, &tm));
	out_obj_open(o, NULL);
	out_str(o, "netns", NULL, w->label);
	out_double(o, "ts", NULL, cur->ts);
	out_double(o, "interval", NULL, secs);
	module_note(o, cur);
	out_text(o, "--- %s  netns %s  %.1f s\n", tbuf, w->label, secs);
	print_moved(o, "counters", &dm, false);
	print_moved(o, "mib", &dk, true);
	if (cur->have_ct)
		print_moved(o, "conntrack", &dc, false);
	print_census_totals(o, cur);
	out_obj_close(o);
	deltaset_free(&dm);
	deltaset_free(&dk);
	deltaset_free(&dc);
	snapshot_free(prev);
	*prev = *cur;
	return 0;
}

/* A sample of @w's netns into @s; false if it could not be entered. */
static bool watch_take(struct watched *w, struct snapshot *s, unsigned int what)
{
	int err;

	if (w->fd >= 0) {
		err = netns_enter_fd(w->fd);
		if (err) {
			fprintf(stderr, "tcptw: setns %s: %s\n", w->label,
				strerror(-err));
			return false;
		}
	}
	snapshot_take(s, what);
	return true;
}

static int watch_loop(const struct opts *opt, struct watched *w, size_t nw,
		      int self)
{
	struct snapshot cur;
	double next = 0;
	struct out o;
	long n = 0;
	size_t i;
	int rc = EXIT_OK;

	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	for (i = 0; i < nw; i++) {
		w[i].have_prev = watch_take(&w[i], &w[i].prev, SNAP_CT);
		if (w[i].have_prev && w[i].prev.mib_err) {
			rc = fail("/proc/net/netstat", w[i].prev.mib_err);
			goto out;
		}
		if (w[i].have_prev)
			module_hint_once(&w[i].prev,
					 "watching kernel MIBs and conntrack only");
		if (!next && w[i].have_prev)
			next = w[i].prev.mono;
	}
	/*
	 * Sample on a fixed grid from the first sample, not a sleep after
	 * each one: a slow census (100k sockets) must not stretch the
	 * period. A sample that overran a tick skips it; interval says so.
	 */
	for (;;) {
		next = tick_next(next, snapshot_clock(CLOCK_MONOTONIC),
				 opt->interval);
		if (!sleep_until(next))
			break;
		for (i = 0; i < nw; i++) {
			if (!watch_take(&w[i], &cur, SNAP_CT | SNAP_CENSUS))
				continue;
			if (!w[i].have_prev) {
				w[i].prev = cur;
				w[i].have_prev = true;
				continue;
			}
			if (watch_print(&o, &w[i], &cur)) {
				snapshot_free(&cur);
				rc = fail("watch", -ENOMEM);
				goto out;
			}
		}
		if (fflush(stdout) || ferror(stdout)) {
			rc = fail("write to stdout", errno ? errno : EIO);
			break;
		}
		if (opt->count && ++n >= opt->count)
			break;
	}
out:
	if (self >= 0 && netns_enter_fd(self))
		rc = EXIT_RUNTIME;
	for (i = 0; i < nw; i++)
		if (w[i].have_prev)
			snapshot_free(&w[i].prev);
	return rc;
}

int cmd_watch(const struct opts *opt)
{
	struct watched one = { .fd = -1 }, *w;
	struct netns_list l;
	int self, err, rc;
	size_t i;

	install_stop_handlers();
	if (!opt->all_netns) {
		snprintf(one.label, sizeof(one.label), "%s", opt->label);
		return watch_loop(opt, &one, 1, -1);
	}
	/* the set of namespaces is the one at start */
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return fail("/proc/self/ns/net", errno);
	err = netns_list_all(&l);
	w = err ? NULL : calloc(l.n ? l.n : 1, sizeof(*w));
	if (!w) {
		close(self);
		if (!err)
			netns_list_free(&l);
		return fail("listing network namespaces", err ? err : -ENOMEM);
	}
	for (i = 0; i < l.n; i++) {
		w[i].fd = l.v[i].fd;
		snprintf(w[i].label, sizeof(w[i].label), "%s", l.v[i].label);
	}
	rc = watch_loop(opt, w, l.n, self);
	free(w);
	netns_list_free(&l);
	close(self);
	return rc;
}

static void print_eps(struct out *o, const char *key,
		      const struct census *c, const struct census_ep *v,
		      size_t n, bool remote)
{
	size_t i;

	out_arr_open(o, key);
	out_text(o, "%-40s %8s %8s %8s %8s%s\n",
		 remote ? "remote endpoint" : "local port", "estab",
		 "timewait", "synrecv", "synsent",
		 remote ? "   range%" : "");
	for (i = 0; i < n; i++) {
		char ep[64];

		if (remote)
			snprintf(ep, sizeof(ep), "%s:%u", v[i].addr,
				 v[i].port);
		else
			snprintf(ep, sizeof(ep), "%u", v[i].port);
		out_obj_open(o, NULL);
		if (remote) {
			out_str(o, "addr", NULL, v[i].addr);
			out_u64(o, "port", NULL, v[i].port);
			out_text(o, "%-40s", ep);
		} else {
			out_u64(o, "port", "%-40llu", v[i].port);
		}
		out_u64(o, "established", " %8llu", v[i].n[CS_ESTAB]);
		out_u64(o, "time_wait", " %8llu", v[i].n[CS_TIME_WAIT]);
		out_u64(o, "syn_recv", " %8llu", v[i].n[CS_SYN_RECV]);
		out_u64(o, "syn_sent", " %8llu", v[i].n[CS_SYN_SENT]);
		if (remote) {
			out_u64(o, "ephemeral_in_use", NULL, v[i].ephemeral);
			out_double(o, "range_share", NULL,
				   census_share(c, &v[i]));
			out_text(o, " %7.1f%%", 100 * census_share(c, &v[i]));
		}
		out_text(o, "\n");
		out_obj_close(o);
	}
	out_arr_close(o);
}

int cmd_sockets(const struct opts *opt)
{
	struct snapshot s;
	struct out o;
	int st;

	snapshot_take(&s, SNAP_CENSUS);
	if (s.census_err) {
		fprintf(stderr, "tcptw: %s: %s\n",
			s.census.why ? s.census.why : "sock_diag dump",
			strerror(-s.census_err));
		snapshot_free(&s);
		return EXIT_RUNTIME;
	}
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_obj_open(&o, NULL);
	header(&o, opt->label, s.ts);
	out_obj_open(&o, "port_range");
	out_u64(&o, "lo", "ephemeral range %llu", s.census.port_lo);
	out_u64(&o, "hi", "-%llu", s.census.port_hi);
	out_u64(&o, "size", " (%llu ports)\n",
		s.census.port_hi - s.census.port_lo + 1);
	out_obj_close(&o);
	/* the same object as watch's "sockets" */
	out_obj_open(&o, "sockets");
	out_text(&o, "total:");
	for (st = 0; st < CS_OTHER; st++)
		out_u64(&o, census_state_name(st), NULL, s.census.total[st]);
	out_text(&o, " established %u, time_wait %u, syn_recv %u, syn_sent %u\n\n",
		 s.census.total[CS_ESTAB],
		 s.census.total[CS_TIME_WAIT], s.census.total[CS_SYN_RECV],
		 s.census.total[CS_SYN_SENT]);
	out_obj_close(&o);
	print_eps(&o, "remote", &s.census, s.census.remote,
		  s.census.nremote < 20 ? s.census.nremote : 20, true);
	out_text(&o, "\n");
	print_eps(&o, "local", &s.census, s.census.local,
		  s.census.nlocal < 20 ? s.census.nlocal : 20, false);
	out_obj_close(&o);
	snapshot_free(&s);
	return EXIT_OK;
}

static int export_one(const struct opts *opt, const char *label, void *arg)
{
	struct snapshot s;
	int err;

	(void)opt;
	snapshot_take(&s, SNAP_ALL);
	if (s.mib_err) {
		snapshot_free(&s);
		return fail("/proc/net/netstat", s.mib_err);
	}
	err = prom_add(arg, &s, label);
	snapshot_free(&s);
	return err ? fail("export", err) : EXIT_OK;
}

/* One exposition: with --all-netns every family holds every netns. */
int cmd_export(const struct opts *opt)
{
	struct prom *p = prom_new();
	int rc, err;

	if (!p)
		return fail("export", -ENOMEM);
	rc = each_netns(opt, export_one, p);
	/* what could be read is worth exporting even if a netns failed */
	err = prom_emit(stdout, p);
	prom_free(p);
	if (!err && fflush(stdout))
		err = -errno;
	return err ? fail("export", err) : rc;
}
