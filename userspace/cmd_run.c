// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * tcptw run -- CMD: snapshot each netns, run CMD, report what moved while
 * it ran and diagnose exactly that window. The benchmark run is the unit.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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
#include "run.h"
#include "run_sig.h"
#include "ctr_names.h"

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

int run_target_enter(const struct target *t)
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

static void gauge_track(struct gauge_track *g, uint64_t v)
{
	if (!g->have) {
		g->start = v;
		g->peak = v;
		g->have = true;
	}
	if (v > g->peak)
		g->peak = v;
	g->end = v;
}

void run_track(struct target *t, const struct snapshot *s)
{
	if (s->have_ct && s->ct.have_count)
		gauge_track(&t->ct, s->ct.count);
	if (s->have_census)
		gauge_track(&t->tw, s->census.total[CS_TIME_WAIT]);
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
	if (ctr_moved(&a->mod, &b->mod, CTR(TW_SYN_PAWS_REJECTED), &d) ||
	    ctr_moved(&a->mib, &b->mib, "TcpExtPAWSTimewait", &d))
		rt->paws += d / dt;
	if (ctr_moved(&a->mod, &b->mod, CTR(CONNECT_PORT_EXHAUSTED), &d)) {
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
		snapshot_take(&cur, SNAP_CENSUS | SNAP_CT);
		run_track(t, &cur);
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

		if (run_target_enter(t)) {
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
		run_track(t, &t->base);
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
	rc = run_report_write(opt, &r, &found);
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
