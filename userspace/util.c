// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* What the commands share: stop handling, errors, the module hint. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "netns.h"
#include "proc.h"

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

/* The first keys of every sample: its netns and time. */
void print_header(struct out *o, const char *label, double ts)
{
	out_str(o, "netns", "netns %s\n", label);
	out_double(o, "ts", NULL, ts);
}

/*
 * Run @fn here, or with --all-netns in every netns in turn (setns, then
 * back): named ones first, then those of running processes. A netns that
 * cannot be entered is reported and skipped; the exit status says so.
 */
int each_netns(const struct opts *opt,
	       int (*fn)(const struct opts *opt, const char *label, void *arg),
	       void *arg)
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

int need_module(const char *what)
{
	if (tcptw_module_loaded())
		return 0;
	fprintf(stderr, "tcptw: %s: %s\n", what, module_hint());
	return EXIT_RUNTIME;
}

int table_err(const char *file, int err)
{
	char what[64];

	snprintf(what, sizeof(what), "/proc/net/tcptw/%s", file);
	if (err == -EPERM || err == -EACCES) {
		fprintf(stderr, "tcptw: %s: %s (needs CAP_NET_ADMIN over the netns)\n",
			what,
			strerror(-err));
		return EXIT_RUNTIME;
	}
	return fail(what, err);
}
