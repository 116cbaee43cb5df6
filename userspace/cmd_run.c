// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * tcptw run -- CMD: snapshot each netns, run CMD, report what moved while
 * it ran and diagnose exactly that window. The benchmark run is the unit.
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "counters.h"
#include "netns.h"
#include "run_sig.h"

/* peers and listeners rows shown per netns */
#define RUN_TOP_ROWS 5

/* One netns watched during the run. */
struct target {
	int fd;			/* the netns, held open */
	char name[128];		/* as given: -N NAME, "pid:N", or "" */
	char label[128];
	struct snapshot base;	/* before CMD */
	struct snapshot last;	/* the previous tick, for the rates */
	bool have_base, have_last;
	bool have_tw;
	uint32_t tw_start, tw_peak, tw_end;
};

struct run {
	struct target *t;
	size_t n;
	int self;		/* tcptw's own netns: CMD runs there */
	pid_t pid;
	double start, start_mono, secs;
	int status;		/* waitpid()'s */
	struct run_sig sig;
	FILE *out;		/* -o FILE, opened before CMD runs; or NULL */
	bool status_shown;	/* the status line is on the terminal */
};

static int target_add(struct run *r, int fd, const char *name)
{
	struct target *nv = realloc(r->t, (r->n + 1) * sizeof(*nv));

	if (!nv) {
		close(fd);
		return -ENOMEM;
	}
	r->t = nv;
	memset(&r->t[r->n], 0, sizeof(r->t[0]));
	r->t[r->n].fd = fd;
	snprintf(r->t[r->n].name, sizeof(r->t[0].name), "%s", name);
	r->n++;
	return 0;
}

/* What an EPERM or EACCES on another netns means, for the message. */
static const char *need_root(int err)
{
	if (err != -EPERM && err != -EACCES)
		return "";
	return " (another netns needs CAP_SYS_ADMIN: run as root, or without -N, --pid, -A)";
}

/* Every netns asked for, held open; an error message and 1 if one isn't. */
static int targets_open(const struct opts *opt, struct run *r)
{
	struct netns_list l;
	char what[300];
	size_t i;
	int fd, err;

	r->self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (r->self < 0)
		return fail("/proc/self/ns/net", errno);
	if (opt->all_netns) {
		err = netns_list_all(&l);
		if (err)
			return fail("listing network namespaces", err);
		for (i = 0; !err && i < l.n; i++) {
			fd = fcntl(l.v[i].fd, F_DUPFD_CLOEXEC, 0);
			err = fd < 0 ? -errno :
			      target_add(r, fd, l.v[i].pid ? "" : l.v[i].label);
		}
		netns_list_free(&l);
		return err ? fail("listing network namespaces", err) : 0;
	}
	for (i = 0; i < (size_t)opt->n_netns; i++) {
		fd = netns_open_name(opt->netns_v[i]);
		if (fd < 0) {
			snprintf(what, sizeof(what), "setns /run/netns/%s%s",
				 opt->netns_v[i], need_root(fd));
			return fail(what, fd);
		}
		if (target_add(r, fd, opt->netns_v[i]))
			return fail("run", -ENOMEM);
	}
	if (opt->pid) {
		fd = netns_open_pid(opt->pid);
		if (fd < 0) {
			snprintf(what, sizeof(what), "setns /proc/%d/ns/net%s",
				 (int)opt->pid, need_root(fd));
			return fail(what, fd);
		}
		snprintf(what, sizeof(what), "pid:%d", (int)opt->pid);
		if (target_add(r, fd, what))
			return fail("run", -ENOMEM);
	}
	if (!r->n) {
		fd = fcntl(r->self, F_DUPFD_CLOEXEC, 0);
		if (fd < 0 || target_add(r, fd, ""))
			return fail("run", fd < 0 ? errno : ENOMEM);
	}
	return 0;
}

/*
 * Into @fd's netns, unless tcptw is in it already: its own netns needs
 * no setns(), nor the privilege setns() needs.
 */
static int enter_ns(int fd)
{
	struct stat a, b;

	if (!fstat(fd, &a) && !stat("/proc/self/ns/net", &b) &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return 0;
	return netns_enter_fd(fd);
}

static int target_enter(const struct target *t)
{
	int err = enter_ns(t->fd);
	char ino[64] = "";
	struct stat st;

	if (!err)
		return 0;
	if (!*t->label && !*t->name && !fstat(t->fd, &st))
		snprintf(ino, sizeof(ino), "net:[%llu]",
			 (unsigned long long)st.st_ino);
	fprintf(stderr, "tcptw: setns %s%s: %s\n", *t->label ? t->label :
		*t->name ? t->name : ino, need_root(err), strerror(-err));
	return err;
}

static void track_tw(struct target *t, const struct snapshot *s)
{
	uint32_t tw;

	if (!s->have_census)
		return;
	tw = s->census.total[CS_TIME_WAIT];
	if (!t->have_tw) {
		t->tw_start = tw;
		t->tw_peak = tw;
		t->have_tw = true;
	}
	if (tw > t->tw_peak)
		t->tw_peak = tw;
	t->tw_end = tw;
}

/* @name's increase from @a to @b; false if either lacks it. */
static bool ctr_moved(const struct ctrset *a, const struct ctrset *b,
		      const char *name, uint64_t *d)
{
	uint64_t x, y;
	unsigned int fl = 0;

	if (!ctrset_get(a, name, &x) || !ctrset_get(b, name, &y))
		return false;
	*d = ctr_sub(x, y, &fl);
	return true;
}

/* What the status line sums over the namespaces, per second. */
struct rates {
	double paws, ports, overflows;
	bool have_ports, have_tw;
	uint64_t tw;
};

static void rates_add(struct rates *rt, const struct snapshot *a,
		      const struct snapshot *b)
{
	double dt = b->mono - a->mono;
	uint64_t d;

	if (dt <= 0)
		return;
	/* the module's SYN count, else the MIB that also counts old dups */
	if (ctr_moved(&a->mod, &b->mod, "TwSynPawsRejected", &d) ||
	    ctr_moved(&a->mib, &b->mib, "TcpExtPAWSTimewait", &d))
		rt->paws += d / dt;
	if (ctr_moved(&a->mod, &b->mod, "ConnectPortExhausted", &d)) {
		rt->ports += d / dt;
		rt->have_ports = true;
	}
	if (ctr_moved(&a->mib, &b->mib, "TcpExtListenOverflows", &d))
		rt->overflows += d / dt;
	if (ctr_moved(&a->mib, &b->mib, "TcpExtTCPTimeWaitOverflow", &d))
		rt->overflows += d / dt;
}

/*
 * The status line, rewritten in place, cut to the terminal's width
 * (TIOCGWINSZ, read at each tick: a resize is followed).
 */
static void status_line(struct run *r, const struct rates *rt)
{
	struct winsize ws;
	char line[256], ports[32], tw[32];
	int cols = 80;

	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
		cols = ws.ws_col;
	if (rt->have_ports)
		snprintf(ports, sizeof(ports), "%.1f", rt->ports);
	else
		snprintf(ports, sizeof(ports), "-");
	if (rt->have_tw)
		snprintf(tw, sizeof(tw), "%llu", (unsigned long long)rt->tw);
	else
		snprintf(tw, sizeof(tw), "-");
	snprintf(line, sizeof(line),
		 "tcptw: %.0fs PAWS/s %.1f EADDRNOTAVAIL/s %s overflows/s %.1f TIME_WAIT %s",
		 snapshot_clock(CLOCK_MONOTONIC) - r->start_mono, rt->paws,
		 ports, rt->overflows, tw);
	/* the last column left free: a full line would wrap on some */
	if (cols - 1 < (int)sizeof(line))
		line[cols > 1 ? cols - 1 : 0] = '\0';
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	r->status_shown = true;
}

/* One sample of every netns: the TIME_WAIT peak, the status line. */
static void tick(struct run *r, bool tty)
{
	struct rates rt = { 0 };
	struct snapshot cur;
	size_t i;

	for (i = 0; i < r->n; i++) {
		struct target *t = &r->t[i];

		if (!t->have_base || enter_ns(t->fd))
			continue;
		snapshot_take(&cur, SNAP_CENSUS);
		track_tw(t, &cur);
		if (cur.have_census) {
			rt.tw += cur.census.total[CS_TIME_WAIT];
			rt.have_tw = true;
		}
		if (t->have_last) {
			rates_add(&rt, &t->last, &cur);
			snapshot_free(&t->last);
		}
		t->last = cur;
		t->have_last = true;
	}
	if (tty)
		status_line(r, &rt);
}

/* Run CMD in tcptw's own netns; -errno, or the error exec() gave. */
static int spawn(const struct opts *opt, struct run *r)
{
	int pfd[2], err = 0;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	r->pid = fork();
	if (r->pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (!r->pid) {
		run_sig_child(&r->sig);
		close(pfd[0]);
		execvp(opt->cmd_argv[0], opt->cmd_argv);
		/* the pipe closes on a successful exec: tell the parent why */
		err = errno;
		n = write(pfd[1], &err, sizeof(err));
		(void)n;
		_exit(127);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(err)) {
		waitpid(r->pid, &r->status, 0);
		return err;
	}
	run_sig_started(&r->sig, r->pid);
	return 0;
}

/*
 * The status line only where CMD's lines cannot land on it: on a terminal
 * that is not CMD's stdout. tcptw does not see CMD's output (it passes
 * through untouched), so it cannot clear the line before each of CMD's;
 * a line CMD writes to the same terminal would be glued to it.
 */
static bool status_wanted(void)
{
	struct stat o, e;

	if (!isatty(STDERR_FILENO))
		return false;
	if (!isatty(STDOUT_FILENO))
		return true;
	return !fstat(STDOUT_FILENO, &o) && !fstat(STDERR_FILENO, &e) &&
	       o.st_rdev != e.st_rdev;
}

/* Until CMD ends: ticks on a fixed grid, signals passed on. */
static void wait_cmd(const struct opts *opt, struct run *r)
{
	bool tty = status_wanted();
	double next = r->start_mono, now, left;
	struct timespec ts;
	pid_t w;

	next = tick_next(next, r->start_mono, opt->interval);
	for (;;) {
		w = waitpid(r->pid, &r->status, WNOHANG);
		if (w == r->pid || (w < 0 && errno != EINTR))
			break;
		run_sig_dispatch(&r->sig);
		now = snapshot_clock(CLOCK_MONOTONIC);
		if (now >= next) {
			tick(r, tty);
			next = tick_next(next, snapshot_clock(CLOCK_MONOTONIC),
					 opt->interval);
			continue;
		}
		left = next - now;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (time_t)left) * 1e9);
		/* SIGCHLD, SIGINT, SIGTERM or SIGHUP end the wait at once */
		ppoll(NULL, 0, &ts, &r->sig.waitmask);
	}
	if (r->status_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

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
static int report_target(struct out *o, struct run *r, struct target *t,
			 bool *found)
{
	struct table pd = { 0 }, ld = { 0 };
	struct diag_window w = { 0 };
	struct diag_input in;
	struct diag_result *res;
	struct snapshot end;
	int err = 0;

	if (!t->have_base || target_enter(t))
		return EXIT_RUNTIME;
	snapshot_take(&end, (SNAP_ALL & ~SNAP_HIST) | SNAP_CTCENSUS);
	if (end.mib_err) {
		snapshot_free(&end);
		return fail("/proc/net/netstat", end.mib_err);
	}
	track_tw(t, &end);
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
	if (t->have_tw) {
		out_u64(o, "start", "  TIME_WAIT sockets: start %llu", t->tw_start);
		out_u64(o, "peak", ", peak %llu", t->tw_peak);
		out_u64(o, "end", ", end %llu\n", t->tw_end);
	}
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
static int report_write(const struct opts *opt, struct run *r, bool *found)
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

static void run_fini(struct run *r)
{
	size_t i;

	run_sig_fini(&r->sig);
	if (r->self >= 0 && enter_ns(r->self))
		fprintf(stderr, "tcptw: setns back: %s\n", strerror(errno));
	for (i = 0; i < r->n; i++) {
		if (r->t[i].have_base)
			snapshot_free(&r->t[i].base);
		if (r->t[i].have_last)
			snapshot_free(&r->t[i].last);
		close(r->t[i].fd);
	}
	free(r->t);
	if (r->self >= 0)
		close(r->self);
	if (r->out)
		fclose(r->out);
}

int cmd_run(const struct opts *opt)
{
	struct run r = { .self = -1 };
	bool found = false;
	int rc, err;
	size_t i;

	/* -o FILE: a path that cannot be written fails before CMD runs */
	if (opt->output) {
		r.out = fopen(opt->output, "we");
		if (!r.out)
			return fail(opt->output, errno);
	}
	rc = targets_open(opt, &r);
	if (rc)
		goto out;
	/* the baselines, before CMD starts */
	for (i = 0; i < r.n; i++) {
		struct target *t = &r.t[i];

		if (target_enter(t)) {
			rc = EXIT_RUNTIME;
			goto out;
		}
		netns_label(t->label, sizeof(t->label), *t->name ? t->name :
			    NULL, 0);
		snapshot_take(&t->base, SNAP_CT | SNAP_HISTCTR | SNAP_CENSUS |
			      SNAP_TABLES);
		t->have_base = true;
		if (t->base.mib_err) {
			rc = fail("/proc/net/netstat", t->base.mib_err);
			goto out;
		}
		track_tw(t, &t->base);
	}
	if (enter_ns(r.self)) {
		rc = fail("setns back", errno);
		goto out;
	}
	err = run_sig_init(&r.sig);
	if (err) {
		rc = fail("signals", err);
		goto out;
	}

	r.start = snapshot_clock(CLOCK_REALTIME);
	r.start_mono = snapshot_clock(CLOCK_MONOTONIC);
	err = spawn(opt, &r);
	if (err) {
		char what[300];

		snprintf(what, sizeof(what), "exec %s", opt->cmd_argv[0]);
		fail(what, err);
		/* as a shell says: not found 127, found but not runnable 126 */
		rc = err == ENOENT ? 127 : 126;
		goto out;
	}
	wait_cmd(opt, &r);
	run_sig_fini(&r.sig);
	r.secs = snapshot_clock(CLOCK_MONOTONIC) - r.start_mono;
	rc = report_write(opt, &r, &found);
	if (WIFEXITED(r.status) && (WEXITSTATUS(r.status) || rc == EXIT_OK))
		rc = WEXITSTATUS(r.status);
	else if (WIFSIGNALED(r.status))
		rc = 128 + WTERMSIG(r.status);
	if (opt->fail_on_diagnosis && found && !WIFSIGNALED(r.status))
		rc = EXIT_FOUND;
out:
	run_fini(&r);
	/*
	 * CMD killed by a signal: tcptw dies of it too, once the report is
	 * out, as perf stat does. A shell loop around tcptw run then stops
	 * at Ctrl-C, as it would around CMD alone (bash ends a loop when its
	 * child died of SIGINT, not when it exited 130).
	 */
	if (rc > 128 && WIFSIGNALED(r.status))
		run_sig_die_as(r.status);
	return rc;
}
