// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * What the commands share: stop handling, errors, the module hint, the
 * findings of diagnose and run.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "counters.h"
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

static void print_evidence(struct out *o, const struct evidence *e)
{
	out_obj_open(o, NULL);
	out_str(o, "name", "    %-36s", e->name);
	switch (e->kind) {
	case EVK_DELTA:
		out_s64(o, "delta", " +%lld", e->v);
		out_double(o, "rate", " (%.1f/s)", e->x);
		break;
	case EVK_VALUE:
		out_s64(o, "value", " = %lld", e->v);
		break;
	case EVK_SHARE:
		out_s64(o, "ephemeral_in_use", " %lld local ports",
			e->v);
		out_double(o, "range_share", " = %.1f%% of the range",
			   100 * e->x);
		break;
	case EVK_LISTENER:
		out_s64(o, "overflows", " %lld overflows", e->v);
		if (e->a != TBL_NONE)
			out_u64(o, "backlog", ", backlog %llu", e->a);
		if (e->b != TBL_NONE)
			out_u64(o, "max_backlog", "/%llu", e->b);
		break;
	}
	out_text(o, "\n");
	out_obj_close(o);
}

/*
 * Plain: @text after @label, word-wrapped at 78 columns and indented under
 * its first line. JSON: the string as is.
 */
void print_wrapped(struct out *o, const char *key, const char *label,
		   const char *text)
{
	int col, indent = (int)strlen(label), len;
	const char *p = text, *sp;

	if (o->json) {
		out_str(o, key, NULL, text);
		return;
	}
	fputs(label, o->f);
	col = indent;
	while (*p) {
		sp = strchr(p, ' ');
		len = sp ? (int)(sp - p) : (int)strlen(p);
		if (col > indent && col + 1 + len > 78) {
			fprintf(o->f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', o->f);
			col++;
		}
		fprintf(o->f, "%.*s", len, p);
		col += len;
		p += len;
		while (*p == ' ')
			p++;
	}
	fputc('\n', o->f);
}

void print_finding(struct out *o, const struct finding *f)
{
	int i;

	out_obj_open(o, NULL);
	out_str(o, "id", "\n[%s] ", f->id);
	out_str(o, "title", "%s\n", f->title);
	out_text(o, "  evidence:\n");
	out_arr_open(o, "evidence");
	for (i = 0; i < f->nev; i++)
		print_evidence(o, &f->ev[i]);
	out_arr_close(o);
	if (f->npeers) {
		out_text(o, "  peers (from %s):\n", f->peers_from);
		out_str(o, "peers_from", NULL, f->peers_from);
	}
	out_arr_open(o, "peers");
	for (i = 0; i < f->npeers; i++) {
		out_obj_open(o, NULL);
		out_str(o, "addr", "    %-36s", f->peers[i].addr);
		out_u64(o, "count", " %llu\n", f->peers[i].n);
		out_obj_close(o);
	}
	out_arr_close(o);
	out_arr_open(o, "notes");
	for (i = 0; i < f->nnotes; i++)
		print_wrapped(o, NULL, "  note: ", f->notes[i]);
	out_arr_close(o);
	print_wrapped(o, "remedy", "  remedy: ", f->remedy);
	/* machine-readable only: the prose above says the same */
	out_arr_open(o, "commands");
	for (i = 0; i < f->ncmds; i++)
		out_str(o, NULL, NULL, f->cmds[i]);
	out_arr_close(o);
	out_bool(o, "application", NULL, f->app);
	out_obj_close(o);
}

void print_findings(struct out *o, const struct diag_result *r)
{
	int i;

	out_str(o, "verdict", NULL, r->n ? "problem" : "no evidence");
	out_arr_open(o, "findings");
	for (i = 0; i < r->n; i++)
		print_finding(o, &r->f[i]);
	out_arr_close(o);
}

void print_no_evidence(struct out *o, const struct diag_result *r)
{
	char list[200];

	if (r->n || o->json)
		return;
	out_text(o, "\n");
	/* resets it could not judge are no evidence either way */
	snprintf(list, sizeof(list), "%s%s",
		 "PAWS/TIME_WAIT rejections, port exhaustion, TIME_WAIT overflow, listen queue overflow, conntrack drops",
		 r->idle_untold ? "" : ", NAT idle resets");
	print_wrapped(o, NULL, "no evidence of: ", list);
}

void print_caveats(struct out *o, const struct diag_result *r,
		   const char *indent)
{
	int i;

	out_arr_open(o, "caveats");
	for (i = 0; i < r->ncaveats; i++) {
		out_text(o, "%s", indent);
		out_str(o, NULL, "caveat: %s\n", r->caveats[i]);
	}
	out_arr_close(o);
}

void print_moved(struct out *o, const char *key, const struct deltaset *d,
		 bool mib, const char *indent)
{
	size_t i;

	out_obj_open(o, key);
	for (i = 0; i < d->n; i++) {
		const struct ctr_delta *c = &d->v[i];

		if (!c->delta || (c->flags & CTR_GONE))
			continue;
		if (mib && !mib_relevant(c->name))
			continue;
		out_text(o, "%s  %-32s %20llu %12.1f/s%s\n", indent, c->name,
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
