// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "netns.h"
#include "proc.h"
#include "util.h"

#ifndef TCPTW_VERSION
#define TCPTW_VERSION "unknown"
#endif

/* Which options each command takes. */
enum {
	O_JSON = 1 << 0, O_NETNS = 1 << 1, O_INTERVAL = 1 << 2,
	O_COUNT = 1 << 3, O_FOLLOW = 1 << 4, O_SINCE = 1 << 5,
	O_BASELINE = 1 << 6, O_SAVE = 1 << 7, O_PROM = 1 << 8,
	O_ALLNS = 1 << 9, O_FAILDIAG = 1 << 10,
	/* run: -N more than once, and a command after "--" */
	O_MULTINS = 1 << 11, O_CMD = 1 << 12,
	/* run: -o FILE, the report's destination */
	O_OUTPUT = 1 << 13,
	/* conntrack: conntrack(8)'s filters, -C, -n */
	O_FAMILY = 1 << 14, O_PROTO = 1 << 15, O_STATE = 1 << 16,
	O_ZONE = 1 << 17, O_MARK = 1 << 18, O_SRC = 1 << 19, O_DST = 1 << 20,
	O_COUNTONLY = 1 << 21, O_TOP = 1 << 22,
	O_CTFILTER = O_FAMILY | O_PROTO | O_STATE | O_ZONE | O_MARK | O_SRC |
		     O_DST,
	/* every command takes these */
	O_ANY = O_JSON | O_NETNS,
};

static const struct command {
	const char *name;
	int (*run)(const struct opts *o);
	unsigned int opts;
} commands[] = {
	{ "stat", cmd_stat, O_ANY | O_ALLNS },
	{ "watch", cmd_watch, O_ANY | O_INTERVAL | O_COUNT | O_ALLNS },
	{ "sockets", cmd_sockets, O_ANY },
	{ "events", cmd_events, O_ANY | O_FOLLOW },
	{ "peers", cmd_peers, O_ANY },
	{ "listeners", cmd_listeners, O_ANY },
	{ "diagnose", cmd_diagnose, O_ANY | O_SINCE | O_BASELINE | O_SAVE },
	{ "export", cmd_export, O_NETNS | O_PROM | O_ALLNS },
	{ "conntrack", cmd_conntrack, O_ANY | O_ALLNS | O_CTFILTER |
	  O_COUNTONLY | O_TOP },
	/* run enters each netns itself: the command runs in tcptw's own */
	{ "run", cmd_run, O_ANY | O_ALLNS | O_INTERVAL | O_FAILDIAG |
	  O_MULTINS | O_CMD | O_OUTPUT },
};

/* How each option is spelled, to name the one a command does not take. */
static const struct {
	unsigned int bit;
	const char *name;
} opt_names[] = {
	{ O_JSON, "--json" }, { O_NETNS, "--netns/--pid" },
	{ O_INTERVAL, "--interval" }, { O_COUNT, "--count" },
	{ O_FOLLOW, "--follow" }, { O_SINCE, "--since" },
	{ O_BASELINE, "--baseline" }, { O_SAVE, "--save-baseline" },
	{ O_PROM, "--prometheus" }, { O_ALLNS, "--all-netns" },
	{ O_FAILDIAG, "--fail-on-diagnosis" }, { O_OUTPUT, "--output" },
	{ O_FAMILY, "--family" }, { O_PROTO, "--proto" },
	{ O_STATE, "--state" }, { O_ZONE, "--zone" }, { O_MARK, "--mark" },
	{ O_SRC, "--src" }, { O_DST, "--dst" },
	{ O_COUNTONLY, "--count-only" }, { O_TOP, "--top" },
};

static const char usage_text[] =
	"Usage: tcptw COMMAND [OPTIONS]\n"
	"TIME_WAIT, PAWS, port-exhaustion, listen-queue and conntrack counters\n"
	"of one network namespace, from tcptw.ko and the kernel's own MIBs.\n"
	"\n"
	"Commands:\n"
	"  stat       [-j] [--all-netns]               counters, MIBs, conntrack, sysctls\n"
	"  watch      [-i SEC] [-c COUNT] [-j] [--all-netns]\n"
	"                                              per-interval deltas and rates\n"
	"  sockets    [-j]                             sock_diag census per endpoint\n"
	"  events     [-f] [-j]                        the module's recent decisions\n"
	"  peers      [-j]                             per remote endpoint table\n"
	"  listeners  [-j]                             per listening socket table\n"
	"  diagnose   [-j] [--since SEC] [--baseline FILE] [--save-baseline FILE]\n"
	"                                              name the causes with evidence\n"
	"  export     --prometheus [--all-netns]       Prometheus text exposition\n"
	"  conntrack  [-j] [-A] [-C] [-n N] [FILTER...] what fills the conntrack table\n"
	"  run        [-N NAME ...|--pid PID|-A] [-j] [-i SEC] [-o FILE]\n"
	"             [--fail-on-diagnosis] [--] CMD [ARGS...]\n"
	"                                              what failed while CMD ran\n"
	"\n"
	"Options:\n"
	"  -j, --json               one JSON object per sample (an array for tables)\n"
	"  -p, --pretty             JSON, indented (implies -j)\n"
	"  -N, --netns NAME         run in the netns /run/netns/NAME (as ss -N);\n"
	"                           run: watch it, once per -N\n"
	"      --pid PID            run in the netns of process PID\n"
	"  -A, --all-netns          stat, watch, export, conntrack, run: every netns,\n"
	"                           named ones and those of running processes\n"
	"  -i, --interval SEC       watch interval, run's status line (default 1)\n"
	"  -c, --count COUNT        watch: stop after COUNT intervals\n"
	"  -f, --follow             events: keep printing new events\n"
	"  -s, --since SEC          diagnose: sampling window (default 5)\n"
	"  -b, --baseline FILE      diagnose: compare with a saved baseline\n"
	"  -S, --save-baseline FILE diagnose: save the counters for a later run\n"
	"  -P, --prometheus         export: Prometheus text format\n"
	"  -o, --output FILE        run: the report to FILE, not stderr\n"
	"      --fail-on-diagnosis  run: exit 3 when a cause was named\n"
	"  -C, --count-only         conntrack: the entry count alone, as conntrack -C\n"
	"  -n, --top N              conntrack: N top sources, destinations (default 10)\n"
	"      FILTER: --proto P --state S --family F --zone N --mark M --src A --dst A\n"
	"  -h, --help               this help\n"
	"  -V, --version            the version\n"
	"\n"
	"Exit status: 0 ok (diagnose: no evidence), 1 runtime failure, 2 usage\n"
	"error, 3 diagnose found a problem; run: CMD's, and killed by the same\n"
	"signal if CMD was.\n"
	"Environment: TCPTW_PROC_ROOT replaces\n"
	"/proc (for fixture trees). Without tcptw.ko, tcptw shows the kernel's\n"
	"own MIBs, sysctls and conntrack and says how to load the module.\n"
	"The reference, with real output of every command: man tcptw.\n";

/* a usage error: what was wrong and where to look, not the whole help */
static int short_usage(void)
{
	size_t i;

	fputs("Usage: tcptw COMMAND [OPTIONS], COMMAND one of:", stderr);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(stderr, " %s", commands[i].name);
	fputs("\nTry 'tcptw --help' for the options.\n", stderr);
	return EXIT_USAGE;
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "tcptw: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return short_usage();
}

/*
 * --help: the usage alone, as nstat's; the reference, with real output of
 * every command, is the man page (docs/tcptw.8). COMMAND --help: the same,
 * if COMMAND is one.
 */
static int print_help(const char *command)
{
	size_t i;

	for (i = 0; command && i < ARRAY_SIZE(commands); i++)
		if (!strcmp(command, commands[i].name))
			break;
	if (command && i == ARRAY_SIZE(commands))
		return bad_usage("unknown command: %s", command);
	fputs(usage_text, stdout);
	return EXIT_OK;
}

/* --help > /dev/full: the error shows at the flush; exit 1, not 0 */
static int flushed(int rc)
{
	errno = 0;
	if (fflush(stdout) || ferror(stdout))
		return fail("write to stdout", errno ? errno : EIO);
	return rc;
}

/* Seconds, decimal only ("1", "0.5", ".5"): not 0x10, 1e3, inf or nan. */
static bool parse_double(const char *s, double *v)
{
	size_t n = strspn(s, "0123456789");
	char *end;

	if (s[n] == '.')
		n += 1 + strspn(s + n + 1, "0123456789");
	if (!n || s[n] || !strcmp(s, "."))
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return !errno && end != s && !*end && *v >= 0 && *v <= 86400 * 365;
}

/* A positive number up to @max, digits only. */
static bool parse_long(const char *s, long *v, long max)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return !errno && end != s && !*end && *v > 0 && *v <= max &&
	       *s >= '0' && *s <= '9';
}

/* The options that take an argument, short and long. */
static const char arg_opts[] = "NicsbSomn";

static bool takes_arg(const char *a, const struct option *lo)
{
	size_t j, n;

	if (a[1] != '-') {
		for (j = 1; a[j]; j++)
			if (strchr(arg_opts, a[j]))
				return !a[j + 1];
		return false;
	}
	n = strlen(a + 2);
	if (strchr(a, '='))
		return false;
	/* getopt_long takes an unambiguous prefix */
	for (; lo->name; lo++)
		if (!strncmp(lo->name, a + 2, n))
			return lo->has_arg == required_argument;
	return false;
}

/*
 * run's CMD: after the first "--", or, as perf stat takes it, from the
 * first word after "run" that is neither an option nor an option's
 * argument. Everything from there on is CMD's, untouched: getopt never
 * sees it. The index CMD starts at, or 0; *@cut: where tcptw's end.
 */
static int find_cmd(int argc, char **argv, const struct option *lo, int *cut)
{
	bool words = false, is_run = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			*cut = i;
			return i + 1;
		}
		if (a[0] == '-' && a[1]) {
			i += takes_arg(a, lo);
			continue;
		}
		if (!words) {
			words = true;
			is_run = !strcmp(a, "run");
			continue;
		}
		if (is_run) {
			*cut = i;
			return i;
		}
	}
	return 0;
}

/* The long options without a short one */
enum {
	OPT_FAMILY = 256, OPT_PROTO, OPT_STATE, OPT_ZONE, OPT_SRC, OPT_DST,
};

static const char bad_proto[] =
	"bad --proto: '%s' (tcp, udp, icmp, icmpv6, sctp, dccp, udplite, gre or 0-255)";
static const char bad_mark[] =
	"bad --mark: '%s' (N[/MASK], 32 bits each, decimal or 0x hex)";
static const char ct_leftover[] =
	"unexpected argument: %s (conntrack -p, -f, -s, -d: --proto, --family, --src, --dst here)";
static const char bad_top[] =
	"tcptw: bad -n/--top: '%s' (1 to %d: the endpoints the census holds)\n";

/* conntrack's filters: "tcptw: bad --proto: x (...)" and exit 2 if not one */
static int ct_filter_opt(struct opts *o, int c, const char *arg,
			 unsigned int *seen)
{
	struct ctc_filter *f = &o->ct_filter;
	unsigned int i;

	switch (c) {
	case OPT_FAMILY:
		*seen |= O_FAMILY;
		if (!ctc_filter_family(f, arg))
			return bad_usage("bad --family: '%s' (ipv4 or ipv6)", arg);
		break;
	case OPT_PROTO:
		*seen |= O_PROTO;
		if (!ctc_filter_proto(f, arg))
			return bad_usage(bad_proto, arg);
		break;
	case OPT_STATE:
		*seen |= O_STATE;
		if (!ctc_filter_state(f, arg)) {
			fprintf(stderr, "tcptw: bad --state: '%s' (a TCP state:",
				arg);
			for (i = 0; ct_tcp_state_name(i); i++)
				fprintf(stderr, " %s", ct_tcp_state_name(i));
			fputs(")\n", stderr);
			return short_usage();
		}
		break;
	case OPT_ZONE:
		*seen |= O_ZONE;
		if (!ctc_filter_zone(f, arg))
			return bad_usage("bad --zone: '%s' (0-65535)", arg);
		break;
	case 'm':
		*seen |= O_MARK;
		if (!ctc_filter_mark(f, arg))
			return bad_usage(bad_mark, arg);
		break;
	case OPT_SRC:
	case OPT_DST:
		*seen |= c == OPT_SRC ? O_SRC : O_DST;
		if (!ctc_filter_addr(f, c == OPT_DST, arg))
			return bad_usage(c == OPT_SRC ?
					 "bad --src: '%s' (an IPv4 or IPv6 address)" :
					 "bad --dst: '%s' (an IPv4 or IPv6 address)",
					 arg);
		break;
	}
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "netns", required_argument, NULL, 'N' },
		{ "pid", required_argument, NULL, 'I' },
		{ "all-netns", no_argument, NULL, 'A' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "follow", no_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 's' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "save-baseline", required_argument, NULL, 'S' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "fail-on-diagnosis", no_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		/* conntrack(8)'s names; its -p, -f and -s are taken here */
		{ "family", required_argument, NULL, OPT_FAMILY },
		{ "proto", required_argument, NULL, OPT_PROTO },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "zone", required_argument, NULL, OPT_ZONE },
		{ "mark", required_argument, NULL, 'm' },
		{ "src", required_argument, NULL, OPT_SRC },
		{ "orig-src", required_argument, NULL, OPT_SRC },
		{ "dst", required_argument, NULL, OPT_DST },
		{ "orig-dst", required_argument, NULL, OPT_DST },
		{ "count-only", no_argument, NULL, 'C' },
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .interval = 1, .since = -1, .ct_top = CTC_PRINT_TOP };
	const struct command *cmd = NULL;
	unsigned int seen = 0;
	bool help = false;
	size_t i;
	long l;
	int c, err, cut = 0;

	/* getopt's own messages say "tcptw:", as every other one */
	argv[0] = "tcptw";
	c = find_cmd(argc, argv, longopts, &cut);
	if (c) {
		o.cmd_argv = argv + c;
		o.cmd_argc = argc - c;
		/* getopt stops at argc: CMD's words are never permuted */
		if (cut < c)
			argv[cut] = NULL;
		argc = cut;
		seen |= O_CMD;
	}
	while ((c = getopt_long(argc, argv, "jpN:Ai:c:fs:b:S:PhVo:m:Cn:",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			seen |= O_JSON;
			break;
		case 'p':
			o.json = true;
			o.pretty = true;
			seen |= O_JSON;
			break;
		case 'N':
			if (!*optarg || strchr(optarg, '/') ||
			    !strcmp(optarg, ".") || !strcmp(optarg, ".."))
				return bad_usage("bad netns name: '%s'", optarg);
			if (o.n_netns == OPTS_MAX_NETNS)
				return bad_usage("%s", "too many --netns");
			if (o.n_netns)
				seen |= O_MULTINS;
			o.netns_v[o.n_netns++] = optarg;
			o.netns = optarg;
			seen |= O_NETNS;
			break;
		case 'I':
			/* pid_t is an int: 4294967297 must not become 1 */
			if (!parse_long(optarg, &l, INT_MAX))
				return bad_usage("bad PID: %s", optarg);
			o.pid = l;
			seen |= O_NETNS;
			break;
		case 'A':
			o.all_netns = true;
			seen |= O_ALLNS;
			break;
		case 'i':
			if (!parse_double(optarg, &o.interval) ||
			    o.interval < 0.01)
				return bad_usage("bad interval: %s", optarg);
			seen |= O_INTERVAL;
			break;
		case 'c':
			if (!parse_long(optarg, &o.count, LONG_MAX))
				return bad_usage("bad count: %s", optarg);
			seen |= O_COUNT;
			break;
		case 'f':
			o.follow = true;
			seen |= O_FOLLOW;
			break;
		case 's':
			if (!parse_double(optarg, &o.since))
				return bad_usage("bad --since: %s", optarg);
			seen |= O_SINCE;
			break;
		case 'b':
			o.baseline = optarg;
			seen |= O_BASELINE;
			break;
		case 'S':
			o.save_baseline = optarg;
			seen |= O_SAVE;
			break;
		case 'P':
			o.prometheus = true;
			seen |= O_PROM;
			break;
		case 'o':
			o.output = optarg;
			seen |= O_OUTPUT;
			break;
		case 'F':
			o.fail_on_diagnosis = true;
			seen |= O_FAILDIAG;
			break;
		case OPT_FAMILY:
		case OPT_PROTO:
		case OPT_STATE:
		case OPT_ZONE:
		case 'm':
		case OPT_SRC:
		case OPT_DST:
			err = ct_filter_opt(&o, c, optarg, &seen);
			if (err)
				return err;
			break;
		case 'C':
			o.ct_count_only = true;
			seen |= O_COUNTONLY;
			break;
		case 'n':
			/* the census holds CTC_TOP_CAP endpoints, no more */
			if (!parse_long(optarg, &o.ct_top, CTC_TOP_CAP)) {
				fprintf(stderr, bad_top, optarg, CTC_TOP_CAP);
				return short_usage();
			}
			seen |= O_TOP;
			break;
		case 'h':
			help = true;
			break;
		case 'V':
			printf("tcptw %s\n", TCPTW_VERSION);
			return flushed(EXIT_OK);
		default:
			/* getopt said what was wrong */
			return short_usage();
		}
	}
	if (help)
		return flushed(print_help(optind < argc ? argv[optind] : NULL));
	if (optind >= argc)
		return bad_usage("%s", "no command given");
	/* conntrack -p tcp: -p is --pretty here, "tcp" is left over */
	if (optind + 1 < argc && !strcmp(argv[optind], "conntrack"))
		return bad_usage(ct_leftover, argv[optind + 1]);
	if (optind + 1 < argc)
		return bad_usage("unexpected argument: %s", argv[optind + 1]);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[optind], commands[i].name))
			cmd = &commands[i];
	if (!cmd)
		return bad_usage("unknown command: %s", argv[optind]);
	if ((seen & O_CMD) && !(cmd->opts & O_CMD))
		return bad_usage("%s takes no command after --", cmd->name);
	if (seen & O_MULTINS & ~cmd->opts)
		return bad_usage("%s", "--netns given more than once");
	for (i = 0; i < ARRAY_SIZE(opt_names); i++)
		if (seen & opt_names[i].bit & ~cmd->opts) {
			fprintf(stderr, "tcptw: option %s not valid for %s\n",
				opt_names[i].name, cmd->name);
			return short_usage();
		}
	if ((cmd->opts & O_CMD) && !o.cmd_argc)
		return bad_usage("%s needs a command: run [OPTIONS] [--] CMD [ARGS...]",
				 cmd->name);
	if (o.netns && o.pid)
		return bad_usage("%s", "--netns and --pid exclude each other");
	if (o.all_netns && (o.netns || o.pid))
		return bad_usage("%s", "--all-netns excludes --netns and --pid");
	if (ctc_filter_conflict(&o.ct_filter))
		return bad_usage("%s", ctc_filter_conflict(&o.ct_filter));
	if (o.ct_count_only && (seen & O_TOP))
		return bad_usage("%s", "--count-only lists no endpoints: not with -n");
	if (cmd->run == cmd_export && !o.prometheus)
		return bad_usage("%s", "export needs --prometheus");
	if (o.baseline && (seen & O_SINCE))
		return bad_usage("%s", "--baseline and --since exclude each other");
	/* --save-baseline alone records now and exits; else sample 5 s */
	if (cmd->run == cmd_diagnose && o.since < 0)
		o.since = o.save_baseline && !o.baseline ? 0 : 5;

	if ((o.netns || o.pid) && !(cmd->opts & O_CMD)) {
		err = o.netns ? netns_enter_name(o.netns) :
			netns_enter_pid(o.pid);
		if (err) {
			char what[300];

			if (o.netns)
				snprintf(what, sizeof(what),
					 "setns /run/netns/%s", o.netns);
			else
				snprintf(what, sizeof(what),
					 "setns /proc/%d/ns/net", (int)o.pid);
			return fail(what, err);
		}
	}
	netns_label(o.label, sizeof(o.label), o.netns, o.pid);
	err = cmd->run(&o);
	/* stat > /dev/full: the error shows at the last flush, if not before */
	if (fflush(stdout) || ferror(stdout)) {
		if (err == EXIT_OK || err == EXIT_FOUND)
			err = fail("write to stdout", errno ? errno : EIO);
	}
	return err;
}
