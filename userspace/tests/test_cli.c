// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* The built ./tcptw: exit codes, messages, JSON that parses back. */
#include "testlib.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct result {
	int rc;
	char *out, *err;
};

static struct result sh(const char *line);

static char *slurp(const char *path)
{
	char *buf = calloc(1, 1 << 20);
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(buf);
	assert_non_null(f);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Run "./tcptw ARGS" in fixture tree @tree ("" for the real /proc). */
static struct result run(const char *tree, const char *args)
{
	char cmd[1024], env[512] = "";
	struct result r;
	int st;

	if (*tree)
		snprintf(env, sizeof(env), "TCPTW_PROC_ROOT=%s/%s ",
			 fixtures(), tree);
	snprintf(cmd, sizeof(cmd), "%s./tcptw %s >tests/tcptw-cli.out "
		 "2>tests/tcptw-cli.err", env, args);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	r.rc = WEXITSTATUS(st);
	r.out = slurp("tests/tcptw-cli.out");
	r.err = slurp("tests/tcptw-cli.err");
	return r;
}

static void done(struct result *r)
{
	free(r->out);
	free(r->err);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Our checker, then Python's json.tool on every line when present. */
static void assert_json(const char *s)
{
	char cmd[128];

	assert_true(json_lines_valid(s));
	if (system("python3 -c '' 2>/dev/null") != 0)
		return;
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys\n"
		 "[json.loads(l) for l in sys.stdin if l.strip()]' "
		 "<tests/tcptw-cli.out");
	assert_int_equal(system(cmd), 0);
}

static void test_usage_errors(void **state)
{
	static const char *const bad[] = {
		"", "bogus", "stat extra", "stat -f", "export",
		"--netns a --pid 1 stat", "watch -i abc", "watch -c 0",
		"diagnose --since 1 --baseline /x", "--nosuch stat",
		"sockets --prometheus", "--pid -5 stat", "bogus --help",
		/* pid_t is an int: this must not become PID 1 */
		"--pid 4294967297 stat", "--pid 0x10 stat", "--pid +1 stat",
		"-n x stat", "--all-netns sockets", "-A --netns a stat",
		"-A diagnose",
		/* run: a command after --, and only run takes one */
		"run", "run --", "run -c 1 -- true", "stat -- true",
		"-N a -N b stat", "run --since 1 -- true",
		"diagnose --fail-on-diagnosis", "-N '' stat", "-N . stat",
		"-N a/b run -- true", "watch -i 0x10", "watch -i 1e3",
		"watch -i inf", "diagnose --since nan", "stat -o x",
		"run -o",
		/* conntrack's filters, -C and -n: bad values, other commands */
		"conntrack --proto bogus", "conntrack --proto 256",
		"conntrack --state tw", "conntrack --mark 1/x",
		"conntrack -m -1", "conntrack --zone 65536",
		"conntrack --family inet", "conntrack --src 1.2.3",
		"conntrack --dst x", "conntrack -n 0", "conntrack -n 3073",
		"conntrack -n x", "conntrack --top -1",
		"conntrack --proto udp --state ESTABLISHED",
		"conntrack --family ipv6 --src 198.18.0.1", "conntrack -C -n 5",
		"stat --proto tcp", "stat -C", "watch -n 3",
		"diagnose --state TIME_WAIT", "export --prometheus --zone 1",
		"run --mark 1 -- true",
	};
	struct result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = run("healthy/t1", bad[i]);
		if (r.rc != 2)
			print_message("# args: %s\n", bad[i]);
		assert_int_equal(r.rc, 2);
		assert_non_null(strstr(r.err, "Usage: tcptw"));
		assert_non_null(strstr(r.err, "tcptw --help"));
		/* the reason and a short usage, not the whole help */
		assert_true(lines(r.err) <= 4);
		assert_string_equal(r.out, "");
		done(&r);
	}
}

static void test_help_version(void **state)
{
	static const char *const cmds[] = {
		"stat", "watch", "sockets", "events", "peers", "listeners",
		"diagnose", "export", "--prometheus", "-N, --netns", "--pid",
		"-p, --pretty", "-A, --all-netns",
		"--since", "--baseline", "--save-baseline", "Exit status",
	};
	struct result r = run("", "--help");
	size_t i;

	(void)state;
	assert_int_equal(r.rc, 0);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		assert_non_null(strstr(r.out, cmds[i]));
	/* the usage alone, as nstat's: the examples are in the man page */
	assert_non_null(strstr(r.out, "man tcptw"));
	assert_null(strstr(r.out, "$ tcptw"));
	assert_true(lines(r.out) <= 50);
	assert_string_equal(r.err, "");
	done(&r);
	/* COMMAND --help: the same usage */
	r = run("", "sockets --help");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "Usage: tcptw COMMAND"));
	assert_null(strstr(r.out, "$ tcptw"));
	done(&r);
	r = run("", "-V");
	assert_int_equal(r.rc, 0);
	assert_int_equal(strncmp(r.out, "tcptw ", 6), 0);
	done(&r);
	/* to a full disk: said, and exit 1, not 0 */
	r = sh("./tcptw --help >/dev/full");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "No space left on device"));
	done(&r);
	r = sh("./tcptw -V >/dev/full");
	assert_int_equal(r.rc, 1);
	done(&r);
}

/* Usage errors name what was wrong, as "tcptw:", never "./tcptw:". */
static void test_usage_messages(void **state)
{
	struct result r = run("healthy/t1", "--since 1 run -- true");

	(void)state;
	assert_int_equal(r.rc, 2);
	assert_non_null(strstr(r.err, "tcptw: option --since not valid for run\n"));
	done(&r);
	r = run("healthy/t1", "--nosuch stat");
	assert_int_equal(r.rc, 2);
	assert_int_equal(strncmp(r.err, "tcptw: unrecognized option", 26), 0);
	done(&r);
	r = run("healthy/t1", "-N '' stat");
	assert_non_null(strstr(r.err, "tcptw: bad netns name: ''"));
	done(&r);
}

static void test_no_module(void **state)
{
	struct result r = run("healthy-nomodule/t1", "stat");

	(void)state;
	assert_int_equal(r.rc, 0);
	/* the note is for people: stderr, once; stdout is the data */
	assert_non_null(strstr(r.err, "tcptw: note: tcptw.ko is not loaded"));
	assert_non_null(strstr(r.err, "insmod tcptw.ko"));
	assert_non_null(strstr(r.err, "modprobe tcptw"));
	assert_int_equal(lines(r.err), 1);
	assert_null(strstr(r.out, "note"));
	assert_non_null(strstr(r.out, "TcpExtPAWSTimewait"));
	assert_non_null(strstr(r.out, "tcp_timestamps"));
	done(&r);
	r = run("healthy-nomodule/t1", "stat -j");
	assert_int_equal(r.rc, 0);
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"loaded\":false"));
	done(&r);
	/* the module's own tables: one line on stderr, exit 1 */
	r = run("healthy-nomodule/t1", "events");
	assert_int_equal(r.rc, 1);
	assert_int_equal(strncmp(r.err, "tcptw: events: tcptw.ko is not "
				 "loaded", 36), 0);
	assert_int_equal(lines(r.err), 1);
	done(&r);
	r = run("healthy-nomodule/t1", "peers");
	assert_int_equal(r.rc, 1);
	done(&r);
}

static void test_runtime_failure(void **state)
{
	struct result r = run("no-such-tree", "stat");

	(void)state;
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, "tcptw: /proc/net/netstat: No such file "
			    "or directory\n");
	done(&r);
	r = run("", "--netns tcptw-no-such-ns stat");
	assert_int_equal(r.rc, 1);
	assert_int_equal(lines(r.err), 1);
	assert_non_null(strstr(r.err, "tcptw: setns /run/netns/"));
	done(&r);
}

/* stat > /dev/full: exit 1 and say why, not 0 */
static void test_write_error(void **state)
{
	static const char *const cmds[] = {
		"stat", "stat -j", "diagnose --since 0.01", "peers",
		"events", "export --prometheus", "watch -i 0.01 -c 1",
	};
	char cmd[512], *err;
	size_t i;
	int st;

	(void)state;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(cmd, sizeof(cmd), "TCPTW_PROC_ROOT=%s/nat_paws/t1 "
			 "./tcptw %s >/dev/full 2>tests/tcptw-cli.err",
			 fixtures(), cmds[i]);
		st = system(cmd);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) != 1)
			print_message("# %s: %d\n", cmds[i], WEXITSTATUS(st));
		assert_int_equal(WEXITSTATUS(st), 1);
		err = slurp("tests/tcptw-cli.err");
		assert_non_null(strstr(err, "No space left on device"));
		free(err);
	}
}

/*
 * conntrack: filters and -n refused with the option and value named, -C
 * from nf_conntrack_count alone; a fixture tree has no table to dump.
 */
static void test_conntrack(void **state)
{
	static const char *const msgs[][2] = {
		{ "conntrack --proto bogus", "tcptw: bad --proto: 'bogus' (" },
		{ "conntrack --state tw", "tcptw: bad --state: 'tw' (" },
		{ "conntrack --mark 1/x", "tcptw: bad --mark: '1/x' (" },
		{ "conntrack -n 0", "tcptw: bad -n/--top: '0' (1 to 3072" },
		{ "stat -C", "tcptw: option --count-only not valid for stat\n" },
		/* conntrack's own -p: --pretty here, "tcp" left over */
		{ "conntrack -p tcp", "tcptw: unexpected argument: tcp "
		  "(conntrack -p, -f, -s, -d: --proto," },
		{ "sockets --src 198.18.0.1",
		  "tcptw: option --src not valid for sockets\n" },
	};
	struct result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		r = run("conntrack_full/t1", msgs[i][0]);
		assert_int_equal(r.rc, 2);
		if (!strstr(r.err, msgs[i][1]))
			print_message("# %s: %s\n", msgs[i][0], r.err);
		assert_non_null(strstr(r.err, msgs[i][1]));
		assert_string_equal(r.out, "");
		done(&r);
	}
	/* -C: the table's count, no dump */
	r = run("conntrack_full/t1", "conntrack -C");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_non_null(strstr(r.out, "\nentries 200 of max 200\n"));
	done(&r);
	r = run("conntrack_full/t1", "conntrack --count-only -j");
	assert_int_equal(r.rc, 0);
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"conntrack\":{\"entries\":200,"
			       "\"counted\":\"nf_conntrack_count\",\"max\":200}}"));
	done(&r);
	/* with a filter -C counts by a dump: none in a fixture tree */
	r = run("conntrack_full/t1", "conntrack -C --proto tcp -j");
	assert_int_equal(r.rc, 1);
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"conntrack\":{\"filter\":{\"proto\":"
			       "\"tcp\"},\"error\":"));
	assert_non_null(strstr(r.err, "tcptw: conntrack dump: "));
	done(&r);
	/* taken, each as conntrack(8) spells it, and said */
	r = run("conntrack_full/t1", "conntrack -n 3072 --family ipv6 "
		"--mark 0xffffffff/1 --src fd00::1 --state listen --zone 7 "
		"--proto 6 --dst fd00::2 -j");
	assert_int_equal(r.rc, 1);
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"filter\":{\"family\":\"ipv6\","
			       "\"proto\":\"tcp\",\"state\":\"SYN_SENT2\","
			       "\"zone\":7,\"mark\":4294967295,\"mark_mask\":1,"
			       "\"src\":\"fd00::1\",\"dst\":\"fd00::2\"}"));
	done(&r);
	r = run("conntrack_full/t1", "conntrack --state TIME_WAIT -m 5");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.out, "\nfilter --state TIME_WAIT --mark 0x5\n"
			       "entries 200 of max 200\n"));
	done(&r);
}

/* One shape per concept: "module" is an object in every command. */
static void test_json_schema(void **state)
{
	static const char *const cmds[] = {
		"stat -j", "watch -j -i 0.01 -c 1", "diagnose -j --since 0.01",
	};
	struct result r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		r = run("nat_paws/t1", cmds[i]);
		assert_json(r.out);
		assert_non_null(strstr(r.out, "\"netns\":\""));
		assert_non_null(strstr(r.out, "\"module\":{\"loaded\":true}"));
		assert_null(strstr(r.out, "module_loaded"));
		done(&r);
		r = run("healthy-nomodule/t1", cmds[i]);
		assert_non_null(strstr(r.out, "\"module\":{\"loaded\":false}"));
		done(&r);
	}
	/* -p: the same JSON, indented over many lines */
	r = run("nat_paws/t1", "stat -p");
	assert_int_equal(r.rc, 0);
	assert_true(lines(r.out) > 50);
	assert_non_null(strstr(r.out, "\n  \"module\": {\n    \"loaded\": true\n  },"));
	assert_int_equal(system("python3 -c 'import json,sys; json.load(sys.stdin)' "
				"<tests/tcptw-cli.out"), 0);
	done(&r);
}

static void test_stat_module(void **state)
{
	struct result r = run("nat_paws/t1", "stat -j");

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"TwSynPawsRejected\":118"));
	assert_non_null(strstr(r.out, "\"RstReceived\":0"));
	done(&r);
	/* what fills the table: a fixture tree has none to dump, and says so */
	r = run("conntrack_full/t1", "stat");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n  entries not dumped: no table under "
			       "TCPTW_PROC_ROOT\nsysctls\n"));
	done(&r);
}

/* missed hook calls: in the data and once on stderr, never silent */
static void test_stat_probes_missed(void **state)
{
	struct result r = run("probes_missed/t1", "stat");

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "tcptw: warning: 42 hook calls missed"));
	assert_int_equal(lines(r.err), 1);
	assert_non_null(strstr(r.out, "probes: 42 hook calls missed"));
	assert_non_null(strstr(r.out, "__inet_hash_connect"));
	/* a hook that missed nothing is not listed */
	assert_null(strstr(r.out, "inet_twsk_alloc"));
	done(&r);
	r = run("probes_missed/t1", "stat -j");
	assert_int_equal(r.rc, 0);
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"probes\":{\"missed\":42,\"hooks\":"
			       "{\"__inet_hash_connect\":37,"
			       "\"tcp_v4_syn_recv_sock\":5}}"));
	done(&r);
	r = run("healthy/t1", "stat -j");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\"probes\":{\"missed\":0}"));
	assert_null(strstr(r.err, "warning"));
	done(&r);
}

static void test_diagnose_exit_codes(void **state)
{
	struct result r;

	(void)state;
	r = run("nat_paws/t0", "diagnose --save-baseline tests/tcptw-cli.base");
	assert_int_equal(r.rc, 0);
	done(&r);
	r = run("nat_paws/t1", "diagnose --baseline tests/tcptw-cli.base");
	assert_int_equal(r.rc, 3);
	assert_non_null(strstr(r.out, "[nat_paws]"));
	assert_non_null(strstr(r.out, "198.51.100.7"));
	assert_non_null(strstr(r.out, "remedy:"));
	done(&r);
	r = run("nat_paws/t1", "diagnose -j -b tests/tcptw-cli.base");
	assert_int_equal(r.rc, 3);
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"verdict\":\"problem\""));
	done(&r);
	r = run("healthy/t0", "diagnose -S tests/tcptw-cli.base");
	done(&r);
	r = run("healthy/t1", "diagnose -b tests/tcptw-cli.base");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "no evidence"));
	done(&r);
	/* resets without the histogram: not named, and not denied either */
	r = run("busy-nomodule/t0", "diagnose -S tests/tcptw-cli.base");
	done(&r);
	r = run("busy-nomodule/t1", "diagnose -b tests/tcptw-cli.base");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "no evidence of: PAWS/TIME_WAIT"));
	assert_non_null(strstr(r.out, "conntrack drops\ncaveat: "));
	assert_non_null(strstr(r.out, "caveat: 3100 connections were reset"));
	done(&r);
	r = run("healthy/t1", "diagnose -b /nonexistent");
	assert_int_equal(r.rc, 1);
	done(&r);
	r = run("healthy/t1", "diagnose --since 0.2 -j");
	assert_int_equal(r.rc, 0);
	assert_json(r.out);
	done(&r);
	unlink("tests/tcptw-cli.base");
}

/*
 * A baseline that is not one: a clear error, exit 1, nothing compared;
 * the errno of what failed (a directory, a full disk); valgrind clean.
 */
static void test_baseline_errors(void **state)
{
	static const char *const bad[] = {
		"#ts 1\n", "xx #ts 1700000000\nmib.X 1\n", "#ts nan\nmib.X 1\n",
		"-1\n", "#ts 1700000000\n",
	};
	bool vg = system("valgrind --version >/dev/null 2>&1") == 0;
	char line[1024];
	struct result r;
	size_t i;
	FILE *f;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = fopen("tests/tcptw-cli.base", "w");
		assert_non_null(f);
		fputs(bad[i], f);
		fclose(f);
		snprintf(line, sizeof(line), "TCPTW_PROC_ROOT=%s/healthy/t1 %s"
			 "./tcptw diagnose -b tests/tcptw-cli.base", fixtures(),
			 vg ? "valgrind -q --error-exitcode=9 --leak-check=full " : "");
		r = sh(line);
		assert_int_equal(r.rc, 1);
		assert_string_equal(r.out, "");
		assert_non_null(strstr(r.err, "tcptw: tests/tcptw-cli.base: not a "
				       "tcptw baseline file: "));
		done(&r);
	}
	unlink("tests/tcptw-cli.base");
	r = run("healthy/t1", "diagnose -b tests");
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, "tcptw: tests: Is a directory\n");
	done(&r);
	r = run("healthy/t1", "diagnose -S /dev/full");
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, "tcptw: /dev/full: No space left on device\n");
	done(&r);
}

static void test_watch(void **state)
{
	struct result r = run("healthy/t1", "watch -i 0.05 -c 3 -j");

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_int_equal(lines(r.out), 3);
	assert_json(r.out);
	done(&r);
	/*
	 * Ctrl-C or SIGTERM end it cleanly, with exit 0. The signal is sent
	 * once two samples are out, i.e. once the handlers are in place:
	 * before that, a background job of sh has SIGINT ignored and would
	 * keep it so (seen on a loaded machine: a watch that never ended).
	 * A KILL after 10 s bounds the test if it does not stop. The file
	 * is emptied before the job starts: the job's own '>' truncates it
	 * only once it runs, and the loop could first count the lines of
	 * the previous run and signal a watch that has not started yet.
	 */
	for (int i = 0; i < 2; i++) {
		char cmd[1024];
		int st;

		snprintf(cmd, sizeof(cmd), ": >tests/tcptw-cli.out; "
			 "TCPTW_PROC_ROOT=%s/healthy/t1 "
			 "./tcptw watch -i 0.05 >>tests/tcptw-cli.out 2>&1 & "
			 "p=$!; n=0; while [ \"$(wc -l <tests/tcptw-cli.out)\" "
			 "-lt 2 ] && [ $n -lt 200 ]; do sleep 0.05; "
			 "n=$((n + 1)); done; "
			 "kill -%s $p; (sleep 10; kill -KILL $p) 2>/dev/null & "
			 "w=$!; wait $p; rc=$?; kill $w 2>/dev/null; exit $rc",
			 fixtures(), i ? "TERM" : "INT");
		st = system(cmd);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		r.out = slurp("tests/tcptw-cli.out");
		assert_true(lines(r.out) >= 2);
		free(r.out);
	}
}

static void test_tables(void **state)
{
	struct result r = run("nat_paws/t1", "events");

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_int_equal(lines(r.out), 21);
	assert_non_null(strstr(r.out, "tw_syn_paws_rejected"));
	done(&r);
	r = run("nat_paws/t1", "events -j");
	assert_int_equal(r.rc, 0);
	assert_int_equal(lines(r.out), 21);
	assert_json(r.out);
	done(&r);
	/* a flood: what the ring holds, and how many the rate limit left out */
	r = run("synflood_cookies/t1", "events");
	assert_int_equal(r.rc, 0);
	assert_int_equal(lines(r.out), 200);
	assert_non_null(strstr(r.err, "tcptw: events: 4800 more were counted but not recorded"));
	done(&r);
	r = run("nat_paws/t1", "events");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.err, "not recorded"));
	done(&r);
	r = run("nat_paws/t1", "peers -j");
	assert_int_equal(r.rc, 0);
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"syn_paws_rejected\":118"));
	done(&r);
	r = run("accept_queue/t1", "listeners");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "overflow_ack"));
	done(&r);
	r = run("accept_queue/t1", "listeners -j");
	assert_json(r.out);
	assert_non_null(strstr(r.out, "\"last_syn_drop_ms\":null"));
	done(&r);
	r = run("accept_queue/t1", "export --prometheus");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "# TYPE tcptw_listen_overflow_total"));
	done(&r);
}

/* The real host: sock_diag needs no root, the module is absent here. */
static void test_host(void **state)
{
	struct result r = run("", "sockets -j");

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_json(r.out);
	/* the census totals: one object, as in watch */
	assert_non_null(strstr(r.out, "\"sockets\":{\"established\":"));
	assert_non_null(strstr(r.out, "\"time_wait\":"));
	assert_null(strstr(r.out, "\"other\""));
	done(&r);
}

/* Run a shell command line; its exit status, output in tests/tcptw-cli.*. */
static struct result sh(const char *line)
{
	char cmd[2048];
	struct result r;
	int st;

	snprintf(cmd, sizeof(cmd), "{ %s; } >tests/tcptw-cli.out "
		 "2>tests/tcptw-cli.err", line);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	r.rc = WEXITSTATUS(st);
	r.out = slurp("tests/tcptw-cli.out");
	r.err = slurp("tests/tcptw-cli.err");
	return r;
}

/*
 * tcptw run's window is exactly CMD's: a fixture tree that CMD turns from
 * accept_queue's t0 into its t1 is diagnosed as that scenario, with the
 * listeners row's gain, and CMD's exit status is tcptw's. The report is
 * on stderr, as perf stat's: stdout is CMD's alone.
 */
static void test_run(void **state)
{
	char dir[] = "/tmp/tcptw-run-XXXXXX", line[1024];
	struct result r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(line, sizeof(line), "cp -r %s/accept_queue/t0/. %s && "
		 "TCPTW_PROC_ROOT=%s ./tcptw run -j -- cp -r %s/accept_queue/t1/. %s",
		 fixtures(), dir, dir, fixtures(), dir);
	r = sh(line);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "");
	assert_int_equal(lines(r.err), 1);
	assert_non_null(strstr(r.err, "{\"command\":[\"cp\",\"-r\","));
	assert_non_null(strstr(r.err, "\"exit_code\":0,\"signal\":null"));
	assert_non_null(strstr(r.err, "\"verdict\":\"problem\""));
	assert_non_null(strstr(r.err, "\"id\":\"accept_queue\""));
	assert_non_null(strstr(r.err, "\"listeners\":[{\"addr\":\"0.0.0.0\",\"port\":80,\"moved\":400,\"deltas\":{\"overflow_ack\":400}}]"));
	/* the census needs a real netns: said, in the data */
	assert_non_null(strstr(r.err, "\"unseen\":[\"sockets"));
	done(&r);
	/* --fail-on-diagnosis: 3 when a cause was named */
	snprintf(line, sizeof(line), "rm -rf %s/* && cp -r %s/accept_queue/t0/. %s && "
		 "TCPTW_PROC_ROOT=%s ./tcptw run --fail-on-diagnosis -- cp -r %s/accept_queue/t1/. %s",
		 dir, fixtures(), dir, dir, fixtures(), dir);
	r = sh(line);
	assert_int_equal(r.rc, 3);
	assert_non_null(strstr(r.err, "tcptw run: cp -r "));
	assert_non_null(strstr(r.err, "[accept_queue]"));
	assert_non_null(strstr(r.err, "listeners that moved most:"));
	done(&r);
	snprintf(line, sizeof(line), "rm -rf %s", dir);
	assert_int_equal(system(line), 0);
	/* nothing moved: no evidence, and CMD's status; CMD echoed quoted */
	r = run("healthy/t1", "run -- sh -c 'echo from-cmd; exit 7'");
	assert_int_equal(r.rc, 7);
	assert_string_equal(r.out, "from-cmd\n");
	assert_non_null(strstr(r.err, "tcptw run: sh -c 'echo from-cmd; "
			       "exit 7': exit 7 after "));
	assert_non_null(strstr(r.err, "no evidence of:"));
	done(&r);
	r = run("healthy/t1", "run -- printf '%s\\n' \"it's\" ''");
	assert_non_null(strstr(r.err, "tcptw run: printf '%s\\n' 'it'\\''s' '': exit 0"));
	done(&r);
	r = run("healthy/t1", "run --fail-on-diagnosis -- true");
	assert_int_equal(r.rc, 0);
	done(&r);
	/* not found: 127, as a shell says, and no report */
	r = run("healthy/t1", "run -- /nonexistent-tcptw-cmd");
	assert_int_equal(r.rc, 127);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "tcptw: exec /nonexistent-tcptw-cmd: "
			    "No such file or directory\n");
	done(&r);
	/* a bad option: nothing run */
	r = sh("rm -f tests/tcptw-run.mark; ./tcptw run -c 1 -- touch "
	       "tests/tcptw-run.mark; test ! -e tests/tcptw-run.mark");
	assert_int_equal(r.rc, 0);
	done(&r);
	/* a command without "--", as perf stat takes it; its options its own */
	r = run("healthy/t1", "run -j sh -c 'echo $0 $1' -j x");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "-j x\n");
	assert_non_null(strstr(r.err, "{\"command\":[\"sh\",\"-c\","));
	done(&r);
	r = run("healthy/t1", "-N x stat -- true");
	assert_int_equal(r.rc, 2);
	done(&r);
}

/*
 * -o FILE: the report there, whole, CMD's output on stdout untouched; a
 * FILE that cannot be written fails before CMD runs.
 */
static void test_run_output(void **state)
{
	struct result r;
	char *rep;

	(void)state;
	unlink("tests/tcptw-run.json");
	r = run("healthy/t1", "run -j -o tests/tcptw-run.json -- printf abc");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "abc");
	assert_null(strstr(r.err, "command"));
	done(&r);
	rep = slurp("tests/tcptw-run.json");
	assert_int_equal(lines(rep), 1);
	assert_int_equal(strncmp(rep, "{\"command\":[\"printf\",\"abc\"]", 27), 0);
	assert_true(json_lines_valid(rep));
	if (system("python3 -c '' 2>/dev/null") == 0)
		assert_int_equal(system("python3 -c 'import json; "
					"json.load(open(\"tests/tcptw-run.json\"))'"), 0);
	free(rep);
	unlink("tests/tcptw-run.json");
	r = sh("rm -f tests/tcptw-run.mark; ./tcptw run -o /nonexistent/r -- "
	       "touch tests/tcptw-run.mark");
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, "tcptw: /nonexistent/r: No such file or "
			    "directory\n");
	assert_int_equal(access("tests/tcptw-run.mark", F_OK), -1);
	done(&r);
	r = run("healthy/t1", "run -o /dev/full -- true");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "/dev/full: No space left on device"));
	done(&r);
}

/*
 * Not root: the host has no tcptw.ko, and nobody may not setns(); run
 * in tcptw's own netns needs neither. Another netns says what it needs.
 */
static void test_run_unprivileged(void **state)
{
	struct result r;

	(void)state;
	if (geteuid() || system("setpriv --help >/dev/null 2>&1")) {
		print_message("# skip: needs root and setpriv\n");
		return;
	}
	r = sh("cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups "
	       "$OLDPWD/tcptw run -- echo hi");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "hi\n");
	assert_non_null(strstr(r.err, "tcptw run: echo hi: exit 0"));
	assert_null(strstr(r.err, "setns"));
	done(&r);
	r = sh("cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups "
	       "$OLDPWD/tcptw run --pid 1 -- echo hi");
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "needs CAP_SYS_ADMIN"));
	done(&r);
	r = sh("cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups "
	       "sh -c 'exec \"$0\" run --pid $$ -- echo hi' $OLDPWD/tcptw");
	/* this shell's netns is tcptw's own: no setns() either */
	assert_int_equal(r.rc, 0);
	done(&r);
}

static volatile sig_atomic_t n_int;

static void on_int(int sig)
{
	(void)sig;
	n_int++;
}

/* CMD for the signal tests: counts SIGINTs, then dies of one. */
static int sigcount_main(const char *path)
{
	struct sigaction sa = { 0 };
	char ready[512];
	FILE *f;
	int i;

	sa.sa_handler = on_int;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	snprintf(ready, sizeof(ready), "%s.ready", path);
	f = fopen(ready, "w");
	if (f)
		fclose(f);
	for (i = 0; !n_int && i < 3000; i++)
		usleep(10000);
	/* any second copy arrives in the next half second */
	usleep(500000);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%d\n", (int)n_int);
		fclose(f);
	}
	signal(SIGINT, SIG_DFL);
	raise(SIGINT);
	return 0;
}

static bool wait_file(const char *path)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (!access(path, F_OK))
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * In a session of its own (no terminal, SIGINT by default, as a
 * foreground job's): "bash -c LOOP" with @loop, else tcptw run alone,
 * around the counting CMD. SIGINT to the process group (@group), else to
 * tcptw alone. CMD must count exactly one; its wait status.
 */
static int sigint_case(bool loop, bool group, int *count)
{
	char line[1024];
	char *rep;
	pid_t pid;
	int st;

	unlink("tests/tcptw-sig.count");
	unlink("tests/tcptw-sig.count.ready");
	unlink("tests/tcptw-sig.loop");
	snprintf(line, sizeof(line), "for i in 1 2 3; do TCPTW_PROC_ROOT=%s/healthy/t1 "
		 "./tcptw run -- tests/test_cli sigcount tests/tcptw-sig.count "
		 "2>/dev/null; echo $i >>tests/tcptw-sig.loop; done", fixtures());
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		setsid();
		signal(SIGINT, SIG_DFL);
		dup2(null, STDERR_FILENO);
		if (loop)
			execlp("bash", "bash", "-c", line, (char *)NULL);
		else
			execl("./tcptw", "tcptw", "run", "--", "tests/test_cli",
			      "sigcount", "tests/tcptw-sig.count", (char *)NULL);
		_exit(127);
	}
	assert_true(wait_file("tests/tcptw-sig.count.ready"));
	/* the handlers are in place once CMD runs; the witness too */
	usleep(200000);
	assert_int_equal(kill(group ? -pid : pid, SIGINT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	rep = slurp("tests/tcptw-sig.count");
	*count = atoi(rep);
	free(rep);
	assert_int_equal(access("tests/tcptw-sig.loop", F_OK), -1);
	return st;
}

/*
 * Ctrl-C as a terminal sends it, and kill -INT of the group: CMD gets
 * one SIGINT, not tcptw's copy too; tcptw dies of SIGINT after its
 * report, so a shell loop around it stops. kill -INT of tcptw alone: CMD
 * gets it from tcptw, once.
 */
static void test_run_sigint(void **state)
{
	int st, n;

	(void)state;
	st = sigint_case(true, true, &n);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	assert_int_equal(n, 1);
	st = sigint_case(false, true, &n);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	assert_int_equal(n, 1);
	st = sigint_case(false, false, &n);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	assert_int_equal(n, 1);
	unlink("tests/tcptw-sig.count");
	unlink("tests/tcptw-sig.count.ready");
}

/*
 * SIGTERM to tcptw alone: CMD gets it and dies of it, the report is still
 * printed, and tcptw dies of SIGTERM too (the shell says 143).
 */
static void test_run_signal(void **state)
{
	char line[512];
	struct result r;

	(void)state;
	snprintf(line, sizeof(line), "TCPTW_PROC_ROOT=%s/healthy/t1 "
		 "./tcptw run -j -- sleep 20 & p=$!; sleep 1; kill -TERM $p; "
		 "wait $p", fixtures());
	r = sh(line);
	assert_int_equal(r.rc, 128 + SIGTERM);
	assert_non_null(strstr(r.err, "\"signal\":15"));
	assert_non_null(strstr(r.err, "\"interrupted\":true"));
	done(&r);
	/* killed: the same signal, the report still printed */
	snprintf(line, sizeof(line), "TCPTW_PROC_ROOT=%s/healthy/t1 ./tcptw "
		 "run -j -- sh -c 'kill -KILL $$'; exit $?", fixtures());
	r = sh(line);
	assert_int_equal(r.rc, 137);
	assert_non_null(strstr(r.err, "\"exit_code\":null,\"signal\":9"));
	done(&r);
}

/*
 * The status line, on a terminal (script(1) gives one, 40 columns): cut
 * to its width, and only where CMD's stdout is not that terminal.
 */
static void test_run_status_line(void **state)
{
	char line[512], *p, *q;
	struct result r;

	(void)state;
	if (system("script --version >/dev/null 2>&1")) {
		print_message("# skip: no script(1)\n");
		return;
	}
	snprintf(line, sizeof(line), "script -qec 'stty cols 40; "
		 "TCPTW_PROC_ROOT=%s/healthy/t1 ./tcptw run -i 0.05 -- sleep 0.5 "
		 ">/dev/null' /dev/null", fixtures());
	r = sh(line);
	assert_int_equal(r.rc, 0);
	p = strstr(r.out, "\r\033[Ktcptw: ");
	assert_non_null(p);
	for (; p; p = q) {
		p += 4;
		q = strstr(p, "\r\033[K");
		/* a status line; not the report after the last clear */
		if (strncmp(p, "tcptw: ", 7) || p[7] < '0' || p[7] > '9')
			continue;
		assert_true((q ? (size_t)(q - p) : strcspn(p, "\r\n")) <= 39);
	}
	done(&r);
	/* CMD's stdout on the same terminal: no status line to glue to */
	snprintf(line, sizeof(line), "script -qec 'TCPTW_PROC_ROOT=%s/healthy/t1 "
		 "./tcptw run -i 0.05 -- sleep 0.5' /dev/null", fixtures());
	r = sh(line);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "\033[K"));
	done(&r);
}

/*
 * A signal tcptw inherited ignored stays so, for tcptw and CMD: a
 * background job of sh (SIGINT ignored) is not stopped by it.
 */
static void test_run_sig_ign(void **state)
{
	struct result r;
	char line[512];
	unsigned long long ign = 0;
	void (*old)(int);
	char *p;

	(void)state;
	snprintf(line, sizeof(line), "TCPTW_PROC_ROOT=%s/healthy/t1 "
		 "./tcptw run -- grep SigIgn /proc/self/status & wait $!",
		 fixtures());
	r = sh(line);
	assert_int_equal(r.rc, 0);
	p = strstr(r.out, "SigIgn:");
	assert_non_null(p);
	sscanf(p + 7, "%llx", &ign);
	assert_true(ign & (1ULL << (SIGINT - 1)));
	done(&r);
	/*
	 * and a foreground one's SIGINT is the default: from a test run
	 * whose own SIGINT is the default (a runner started in the
	 * background, nohup, CI, hands it down ignored otherwise)
	 */
	old = signal(SIGINT, SIG_DFL);
	snprintf(line, sizeof(line), "TCPTW_PROC_ROOT=%s/healthy/t1 "
		 "./tcptw run -- grep SigIgn /proc/self/status", fixtures());
	r = sh(line);
	signal(SIGINT, old);
	p = strstr(r.out, "SigIgn:");
	assert_non_null(p);
	sscanf(p + 7, "%llx", &ign);
	assert_false(ign & (1ULL << (SIGINT - 1)));
	done(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_no_module),
		cmocka_unit_test(test_runtime_failure),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_json_schema),
		cmocka_unit_test(test_stat_module),
		cmocka_unit_test(test_stat_probes_missed),
		cmocka_unit_test(test_diagnose_exit_codes),
		cmocka_unit_test(test_baseline_errors),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_usage_messages),
		cmocka_unit_test(test_conntrack),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_run_output),
		cmocka_unit_test(test_run_unprivileged),
		cmocka_unit_test(test_run_signal),
		cmocka_unit_test(test_run_sigint),
		cmocka_unit_test(test_run_sig_ign),
		cmocka_unit_test(test_run_status_line),
	};

	if (argc == 3 && !strcmp(argv[1], "sigcount"))
		return sigcount_main(argv[2]);

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
