// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * What fills the conntrack table: the aggregation, and the dump through
 * libnetfilter_conntrack with nfct_open/nfct_query wrapped, so entries
 * are synthetic and no kernel is asked.
 */
#include "testlib.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include "ct_census.h"
#include "output.h"
#include "prom.h"
#include "proc.h"

/* the wrapped library: a fake handle, and entries made up per call */
static int open_errno, query_errno;
static unsigned long dump_n;
static uint32_t query_family;
static void (*filler)(struct nf_conntrack *ct, unsigned long i);
static int (*dump_cb)(enum nf_conntrack_msg_type, struct nf_conntrack *,
		      void *);
static void *dump_data;
static char fake_handle;

struct nfct_handle *__wrap_nfct_open(uint8_t subsys, unsigned int flags);
struct nfct_handle *__wrap_nfct_open(uint8_t subsys, unsigned int flags)
{
	(void)subsys;
	(void)flags;
	if (open_errno) {
		errno = open_errno;
		return NULL;
	}
	return (struct nfct_handle *)&fake_handle;
}

int __wrap_nfct_close(struct nfct_handle *h);
int __wrap_nfct_close(struct nfct_handle *h)
{
	assert_ptr_equal(h, &fake_handle);
	return 0;
}

int __wrap_nfct_callback_register(struct nfct_handle *h,
				  enum nf_conntrack_msg_type type,
				  int (*cb)(enum nf_conntrack_msg_type,
					    struct nf_conntrack *, void *),
				  void *data);
int __wrap_nfct_callback_register(struct nfct_handle *h,
				  enum nf_conntrack_msg_type type,
				  int (*cb)(enum nf_conntrack_msg_type,
					    struct nf_conntrack *, void *),
				  void *data)
{
	assert_ptr_equal(h, &fake_handle);
	assert_int_equal(type, NFCT_T_ALL);
	dump_cb = cb;
	dump_data = data;
	return 0;
}

/*
 * Entry i of the synthetic table: 9 of 10 TCP TIME_WAIT toward
 * 127.0.0.1:9000 from 1000 sources 10.0.x.y, 1 of 10 UDP toward
 * 198.18.0.1:53 in zone 7.
 */
static void fill(struct nf_conntrack *ct, unsigned long i)
{
	bool tcp = i % 10;

	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, AF_INET);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, tcp ? IPPROTO_TCP :
			 IPPROTO_UDP);
	nfct_set_attr_u32(ct, ATTR_ORIG_IPV4_SRC,
			  htonl(0x0a000000 | (i % 1000)));
	nfct_set_attr_u32(ct, ATTR_ORIG_IPV4_DST,
			  htonl(tcp ? 0x7f000001 : 0xc6120001));
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, htons(1024 + i % 60000));
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(tcp ? 9000 : 53));
	if (tcp) {
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, TCP_CONNTRACK_TIME_WAIT);
		nfct_set_attr_u16(ct, ATTR_ZONE, 0);
	} else {
		nfct_attr_unset(ct, ATTR_TCP_STATE);
		nfct_set_attr_u16(ct, ATTR_ZONE, 7);
	}
}

/*
 * Entry i of a mixed table, 4 kinds in turn, 100 entries: 25 each of
 *  0: IPv6 TCP ESTABLISHED fd00::1 -> [fd00::2]:443, ASSURED, no mark
 *  1: IPv4 TCP TIME_WAIT 198.18.0.1 -> 198.18.0.2:80, ASSURED, mark 0x21
 *  2: IPv4 UDP 198.18.0.3 -> 198.18.0.4:53, zone 5, unreplied, no mark
 *  3: IPv4 ICMP 198.18.0.1 -> 198.19.0.9, replied, mark 0x31; one in 5
 *     of them (i % 20 == 3) DYING
 */
static void fill_mix(struct nf_conntrack *ct, unsigned long i)
{
	static const uint8_t v6src[16] = { 0xfd, [15] = 1 };
	static const uint8_t v6dst[16] = { 0xfd, [15] = 2 };
	static const uint32_t v4[4][2] = {
		{ 0, 0 }, { 0xc6120001, 0xc6120002 },
		{ 0xc6120003, 0xc6120004 }, { 0xc6120001, 0xc6130009 },
	};
	unsigned int k = i % 4;

	nfct_attr_unset(ct, ATTR_TCP_STATE);
	nfct_attr_unset(ct, ATTR_ZONE);
	nfct_attr_unset(ct, ATTR_MARK);
	nfct_attr_unset(ct, ATTR_ORIG_PORT_DST);
	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, k ? AF_INET : AF_INET6);
	if (k) {
		nfct_set_attr_u32(ct, ATTR_ORIG_IPV4_SRC, htonl(v4[k][0]));
		nfct_set_attr_u32(ct, ATTR_ORIG_IPV4_DST, htonl(v4[k][1]));
	} else {
		nfct_set_attr(ct, ATTR_ORIG_IPV6_SRC, v6src);
		nfct_set_attr(ct, ATTR_ORIG_IPV6_DST, v6dst);
	}
	switch (k) {
	case 0:
	case 1:
		nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, IPPROTO_TCP);
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, k ? TCP_CONNTRACK_TIME_WAIT :
				 TCP_CONNTRACK_ESTABLISHED);
		nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(k ? 80 : 443));
		nfct_set_attr_u32(ct, ATTR_STATUS, IPS_ASSURED | IPS_SEEN_REPLY |
				  IPS_CONFIRMED);
		if (k)
			nfct_set_attr_u32(ct, ATTR_MARK, 0x21);
		break;
	case 2:
		nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, IPPROTO_UDP);
		nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(53));
		nfct_set_attr_u16(ct, ATTR_ZONE, 5);
		nfct_set_attr_u32(ct, ATTR_STATUS, IPS_CONFIRMED);
		break;
	default:
		nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, IPPROTO_ICMP);
		nfct_set_attr_u32(ct, ATTR_MARK, 0x31);
		nfct_set_attr_u32(ct, ATTR_STATUS, IPS_SEEN_REPLY | IPS_CONFIRMED |
				  (i % 20 == 3 ? IPS_DYING : 0));
		break;
	}
}

int __wrap_nfct_query(struct nfct_handle *h, enum nf_conntrack_query q,
		      const void *data);
int __wrap_nfct_query(struct nfct_handle *h, enum nf_conntrack_query q,
		      const void *data)
{
	struct nf_conntrack *ct;
	unsigned long i;

	assert_ptr_equal(h, &fake_handle);
	assert_int_equal(q, NFCT_Q_DUMP);
	/* the family asked for: checked by the tests (the kernel's filter) */
	query_family = *(const uint32_t *)data;
	if (query_errno) {
		errno = query_errno;
		return -1;
	}
	/* one object reused: the census must not keep it */
	ct = nfct_new();
	assert_non_null(ct);
	for (i = 0; i < dump_n; i++) {
		filler(ct, i);
		if (dump_cb(NFCT_T_UPDATE, ct, dump_data) != NFCT_CB_CONTINUE)
			break;
	}
	nfct_destroy(ct);
	return 0;
}

/* A proc root with two of the timeout sysctls. */
static char root[] = "/tmp/tcptw-ctc-XXXXXX";

static int setup(void **state)
{
	char cmd[512];

	(void)state;
	open_errno = 0;
	query_errno = 0;
	dump_n = 0;
	filler = fill;
	if (!mkdtemp(root))
		return -1;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/net/netfilter && cd %s/sys/net/netfilter && "
		 "echo 120 >nf_conntrack_tcp_timeout_time_wait && "
		 "echo 432000 >nf_conntrack_tcp_timeout_established",
		 root, root);
	if (system(cmd))
		return -1;
	setenv("TCPTW_PROC_ROOT", root, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	strcpy(root, "/tmp/tcptw-ctc-XXXXXX");
	return system(cmd) ? -1 : 0;
}

static void test_dump(void **state)
{
	const struct ctc_slot *top[3];
	struct ct_census c;
	char ep[64];

	(void)state;
	dump_n = 200;
	assert_int_equal(ct_census_init(&c), 0);
	assert_int_equal(ct_census_collect(&c), 0);
	assert_int_equal(query_family, AF_UNSPEC);
	assert_int_equal(c.total, 200);
	assert_int_equal(c.proto[IPPROTO_TCP], 180);
	assert_int_equal(c.proto[IPPROTO_UDP], 20);
	assert_int_equal(c.tcp_state[CTC_TCP_TIME_WAIT], 180);
	assert_int_equal(c.nzones, 2);
	/* entry 0 is UDP: zone 7 came first */
	assert_int_equal(c.zone[0].zone, 7);
	assert_int_equal(c.zone[0].n, 20);
	assert_int_equal(c.timeout[CTC_TCP_TIME_WAIT], 120);
	assert_int_equal(c.timeout[CTC_TCP_ESTABLISHED], 432000);
	assert_int_equal(c.timeout[1], -1);
	assert_int_equal(ct_census_top(&c.dst, top, 3), 2);
	ctc_key_str(&top[0]->k, ep, sizeof(ep));
	assert_string_equal(ep, "127.0.0.1:9000");
	assert_int_equal(top[0]->n, 180);
	assert_int_equal(top[0]->k.proto, IPPROTO_TCP);
	assert_true(ctc_key_loopback(&top[0]->k));
	assert_false(ctc_key_loopback(&top[1]->k));
	/* 200 sources, one entry each: ties ordered by address */
	assert_int_equal(ct_census_top(&c.src, top, 3), 3);
	ctc_key_str(&top[0]->k, ep, sizeof(ep));
	assert_string_equal(ep, "10.0.0.0");
	assert_int_equal(c.src.untracked, 0);
	ct_census_free(&c);
}

/* 1,000,000 entries through the library's callback in under 1 s of CPU */
static void test_dump_million(void **state)
{
	struct timespec a, b;
	struct ct_census c;
	double secs;

	(void)state;
	dump_n = 1000000;
	assert_int_equal(ct_census_init(&c), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	assert_int_equal(ct_census_collect(&c), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	secs = b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9;
	print_message("# 1000000 entries in %.3f s of CPU\n", secs);
	/* under valgrind (its preload) the bound is not the code's */
	if (!strstr(getenv("LD_PRELOAD") ?: "", "vgpreload"))
		assert_true(secs < 1.0);
	assert_int_equal(c.total, 1000000);
	assert_int_equal(c.tcp_state[CTC_TCP_TIME_WAIT], 900000);
	assert_int_equal(c.src.used, 1000);
	ct_census_free(&c);
}

static void test_dump_errors(void **state)
{
	struct ct_census c;

	(void)state;
	assert_int_equal(ct_census_init(&c), 0);
	open_errno = EPERM;
	assert_int_equal(ct_census_collect(&c), -EPERM);
	open_errno = 0;
	query_errno = ENOBUFS;
	assert_int_equal(ct_census_collect(&c), -ENOBUFS);
	ct_census_free(&c);
}

/* More endpoints than the bounded table: counted, not kept one by one */
static void test_bounded(void **state)
{
	struct ctc_entry e = { .family = AF_INET6, .proto = IPPROTO_TCP,
			       .have_state = true, .tcp_state = 3 };
	const struct ctc_slot *top[2];
	struct ct_census c;
	char ep[64];
	uint32_t i;

	(void)state;
	assert_int_equal(ct_census_init(&c), 0);
	e.dst[0] = 0xfd;
	e.dst[15] = 1;
	e.dport = 443;
	for (i = 0; i < 10000; i++) {
		e.src[0] = 0xfd;
		memcpy(e.src + 12, &i, sizeof(i));
		e.zone = i % 20;
		ct_census_add(&c, &e);
	}
	assert_int_equal(c.total, 10000);
	/* one entry each: every replacement inherits the least count */
	assert_int_equal(c.src.used, CTC_TOP_CAP);
	assert_int_equal(c.src.replaced, 10000 - CTC_TOP_CAP);
	assert_int_equal(c.src.untracked, 10000 - CTC_TOP_CAP);
	assert_int_equal(ct_census_floor(&c.src), 3);
	assert_int_equal(c.nzones, CTC_ZONES);
	assert_int_equal(c.zone_other, 10000 / 20 * 4);
	assert_int_equal(ct_census_top(&c.dst, top, 2), 1);
	ctc_key_str(&top[0]->k, ep, sizeof(ep));
	assert_string_equal(ep, "[fd00::1]:443");
	assert_int_equal(top[0]->n, 10000);
	assert_string_equal(ct_tcp_state_name(3), "ESTABLISHED");
	assert_null(ct_tcp_state_name(10));
	assert_string_equal(ct_tcp_state_sysctl(CTC_TCP_TIME_WAIT),
			    "nf_conntrack_tcp_timeout_time_wait");
	assert_null(ct_proto_name(253));
	ct_census_free(&c);
}

/* One TCP entry from 10.0.0.1 to @dst:@port (host order) */
static void add_dst(struct ct_census *c, uint32_t dst, uint16_t port)
{
	struct ctc_entry e = { .family = AF_INET, .proto = IPPROTO_TCP,
			       .have_state = true, .tcp_state = 7,
			       .dport = port };
	uint32_t a = htonl(0x0a000001);

	memcpy(e.src, &a, 4);
	a = htonl(dst);
	memcpy(e.dst, &a, 4);
	ct_census_add(c, &e);
}

/*
 * Issue 40: 5,000 one-entry destinations fill the table before 2,000
 * entries to a loopback upstream; it must come out on top all the same.
 */
static void test_late_heavy(void **state)
{
	const struct ctc_slot *top[2];
	struct ct_census c;
	char ep[64];
	uint32_t i;

	(void)state;
	assert_int_equal(ct_census_init(&c), 0);
	for (i = 0; i < 5000; i++)
		add_dst(&c, 0xc6120000 | i, 80);
	for (i = 0; i < 2000; i++)
		add_dst(&c, 0x7f000001, 9000);
	assert_int_equal(ct_census_top(&c.dst, top, 2), 2);
	ctc_key_str(&top[0]->k, ep, sizeof(ep));
	assert_string_equal(ep, "127.0.0.1:9000");
	assert_true(top[0]->n - top[0]->err >= 2000);
	assert_true(top[0]->n <= 2000 + top[0]->err);
	/* surely above any other: guaranteed the top */
	assert_true(top[0]->n - top[0]->err > top[1]->n);
	assert_true(c.dst.replaced > 0);
	assert_true(ct_census_floor(&c.dst) <= c.total / CTC_TOP_CAP);
	ct_census_free(&c);
}

/*
 * Up to CTC_TOP_CAP destinations: exact, err 0, as the first-come table
 * counted them; the first one past it is approximate but held.
 */
static void test_exact(void **state)
{
	const struct ctc_slot *top[CTC_TOP_CAP];
	struct ct_census c;
	uint32_t i, id, j;
	size_t n;

	(void)state;
	assert_int_equal(ct_census_init(&c), 0);
	/* destination i gets i % 7 + 1 entries, interleaved */
	for (j = 0; j < 7; j++)
		for (i = 0; i < CTC_TOP_CAP; i++)
			if (i % 7 >= j)
				add_dst(&c, 0xc6120000 | i, 80);
	n = ct_census_top(&c.dst, top, CTC_TOP_CAP);
	assert_int_equal(n, CTC_TOP_CAP);
	for (i = 0; i < n; i++) {
		id = ntohl(*(const uint32_t *)top[i]->k.addr) & 0xffff;
		assert_int_equal(top[i]->n, id % 7 + 1);
		assert_int_equal(top[i]->err, 0);
		/* most first, ties by key */
		if (i)
			assert_true(top[i - 1]->n > top[i]->n ||
				    memcmp(&top[i - 1]->k, &top[i]->k,
					   sizeof(top[i]->k)) < 0);
	}
	assert_int_equal(c.dst.replaced, 0);
	assert_int_equal(c.dst.untracked, 0);
	assert_int_equal(ct_census_floor(&c.dst), 0);
	/* one more: it replaces a one-entry destination */
	for (i = 0; i < 10; i++)
		add_dst(&c, 0x7f000001, 9000);
	n = ct_census_top(&c.dst, top, 1);
	assert_int_equal(n, 1);
	assert_int_equal(top[0]->k.port, 9000);
	assert_int_equal(top[0]->n, 11);
	assert_int_equal(top[0]->err, 1);
	assert_int_equal(c.dst.replaced, 1);
	assert_int_equal(c.dst.untracked, 1);
	ct_census_free(&c);
}

/* A fixed-seed LCG: the same stream on every host */
static uint32_t rnd(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/*
 * A random stream against exact counts: half of it over 20,000 light
 * destinations, half over 20 heavy ones, heavy one k joining after k/20
 * of the stream (most after the table is full).
 */
#define RND_N 200000
#define RND_KEYS 20100
static void test_random(void **state)
{
	uint64_t sum = 0, x = 40;
	struct ct_census c;
	uint32_t *exact;
	uint32_t i, id;
	size_t held = 0;

	(void)state;
	exact = calloc(RND_KEYS, sizeof(*exact));
	assert_non_null(exact);
	assert_int_equal(ct_census_init(&c), 0);
	for (i = 0; i < RND_N; i++) {
		if (rnd(&x) & 1)
			id = 100 + rnd(&x) % 20000;
		else
			id = rnd(&x) % (1 + (uint64_t)i * 20 / RND_N);
		exact[id]++;
		add_dst(&c, 0x0b000000 | id, 80);
	}
	assert_int_equal(c.total, RND_N);
	for (i = 0; i < CTC_TOP_SLOTS; i++) {
		const struct ctc_slot *s = &c.dst.slot[i];

		if (!s->n)
			continue;
		id = ntohl(*(const uint32_t *)s->k.addr) & 0xffffff;
		assert_true(id < RND_KEYS);
		/* true count in [n - err, n] */
		assert_true(s->n >= exact[id]);
		assert_true(s->n - s->err <= exact[id]);
		sum += s->n;
		held++;
		exact[id] = 0;	/* seen */
	}
	/* every destination not held: at most total/CAP, at most the floor */
	for (id = 0; id < RND_KEYS; id++) {
		assert_true(exact[id] <= RND_N / CTC_TOP_CAP);
		assert_true(exact[id] <= ct_census_floor(&c.dst));
	}
	assert_int_equal(held, CTC_TOP_CAP);
	assert_int_equal(sum, RND_N);
	assert_true(c.dst.replaced > 0);
	ct_census_free(&c);
	free(exact);
}

/* The synthetic table of fill(): 200 entries */
static void census200(struct ct_census *c)
{
	dump_n = 200;
	filler = fill;
	assert_int_equal(ct_census_init(c), 0);
	assert_int_equal(ct_census_collect(c), 0);
}

/*
 * @c as print_ct_census_top() writes it with @top rows (after @f's
 * filter line, if any) inside {"conntrack": ...}, plain or JSON
 */
static char *print_top(const struct ct_census *c, const struct ctc_filter *f,
		       bool json, const char *ind, size_t top)
{
	struct out o;
	size_t len;
	char *buf;
	FILE *mf = open_memstream(&buf, &len);

	assert_non_null(mf);
	out_init(&o, mf, json);
	out_obj_open(&o, NULL);
	out_obj_open(&o, "conntrack");
	if (f)
		print_ctc_filter(&o, f);
	print_ct_census_top(&o, c, ind, top);
	out_obj_close(&o);
	out_obj_close(&o);
	fclose(mf);
	return buf;
}

/* what print_ct_census() writes: stat's conntrack part, conntrack -j */
static char *print(const struct ct_census *c, bool json, const char *ind)
{
	return print_top(c, NULL, json, ind, CTC_PRINT_TOP);
}

/* What stat shows in its conntrack part (indented) and conntrack -j */
static void test_print(void **state)
{
	struct ct_census c;
	char *t;

	(void)state;
	census200(&c);
	t = print(&c, false, "  ");
	assert_non_null(strstr(t, "  entries dumped 200\n  by protocol\n"));
	assert_non_null(strstr(t, "\n    tcp                                       180\n"));
	assert_non_null(strstr(t, "\n    TIME_WAIT                                 180      120 s "
			       "(nf_conntrack_tcp_timeout_time_wait)\n"));
	assert_non_null(strstr(t, "\n  top destinations\n    tcp     127.0.0.1:9000"));
	free(t);
	t = print(&c, true, "  ");
	assert_true(json_lines_valid(t));
	assert_non_null(strstr(t, "{\"conntrack\":{\"census\":{\"dumped\":200,"
			       "\"protocols\":{\"tcp\":180,\"udp\":20},"
			       "\"tcp_states\":{\"TIME_WAIT\":{\"entries\":180,"
			       "\"timeout_s\":120,\"sysctl\":"
			       "\"nf_conntrack_tcp_timeout_time_wait\","
			       "\"status\":{\"assured\":0,\"unreplied\":180,"
			       "\"dying\":0}}},"
			       "\"zones\":{\"7\":20,\"0\":180},"
			       "\"status\":{\"assured\":0,\"unreplied\":200,"
			       "\"dying\":0},"));
	assert_non_null(strstr(t, "\"destinations\":[{\"proto\":\"tcp\","
			       "\"endpoint\":\"127.0.0.1:9000\",\"entries\":180,"
			       "\"max_overcount\":0}"));
	assert_non_null(strstr(t, "\"untracked_destinations\":0}"));
	free(t);
	ct_census_free(&c);
}

/* Approximate counts: said in text, the overcount in JSON */
static void test_print_approx(void **state)
{
	struct ct_census c;
	uint32_t i;
	char *t;

	(void)state;
	assert_int_equal(ct_census_init(&c), 0);
	for (i = 0; i < 5000; i++)
		add_dst(&c, 0xc6120000 | i, 80);
	for (i = 0; i < 2000; i++)
		add_dst(&c, 0x7f000001, 9000);
	t = print(&c, false, "");
	assert_non_null(strstr(t, "\ntop destinations\n  tcp     127.0.0.1:9000                   2001  (at most 1 over)\n"));
	assert_non_null(strstr(t, "  (approximate past 3072 endpoints: each count at most its overcount above the true one; one not listed has at most 1 entries; at most 1929 entries are of ones not held)\n"));
	free(t);
	t = print(&c, true, "");
	assert_true(json_lines_valid(t));
	assert_non_null(strstr(t, "\"destinations\":[{\"proto\":\"tcp\","
			       "\"endpoint\":\"127.0.0.1:9000\",\"entries\":2001,"
			       "\"max_overcount\":1}"));
	free(t);
	ct_census_free(&c);
}

/* conntrack's option @opt (without "--") set to @arg, as tcptw parses it */
static bool set_filter(struct ctc_filter *f, const char *opt, const char *arg)
{
	if (!strcmp(opt, "proto"))
		return ctc_filter_proto(f, arg);
	if (!strcmp(opt, "state"))
		return ctc_filter_state(f, arg);
	if (!strcmp(opt, "family"))
		return ctc_filter_family(f, arg);
	if (!strcmp(opt, "zone"))
		return ctc_filter_zone(f, arg);
	if (!strcmp(opt, "mark"))
		return ctc_filter_mark(f, arg);
	if (!strcmp(opt, "src"))
		return ctc_filter_addr(f, false, arg);
	if (!strcmp(opt, "dst"))
		return ctc_filter_addr(f, true, arg);
	fail_msg("no option %s", opt);
	return false;
}

/* The mixed table of fill_mix() through the dump, counted under @f */
static void mixed(struct ct_census *c, const struct ctc_filter *f)
{
	dump_n = 100;
	filler = fill_mix;
	assert_int_equal(ct_census_init(c), 0);
	c->filter = f;
	assert_int_equal(ct_census_collect(c), 0);
	assert_int_equal(c->dumped, 100);
}

/*
 * Each filter kind, alone and combined, picks the entries of fill_mix()
 * that conntrack -L would list with it; the rest of the dump is not
 * counted anywhere.
 */
static void test_filters(void **state)
{
	static const struct {
		const char *opt[2], *arg[2];
		uint64_t n;
	} cases[] = {
		{ { "proto" }, { "tcp" }, 50 },
		{ { "proto" }, { "UDP" }, 25 },
		{ { "proto" }, { "1" }, 25 },
		{ { "proto" }, { "icmpv6" }, 0 },
		{ { "state" }, { "established" }, 25 },
		{ { "state" }, { "TIME_WAIT" }, 25 },
		{ { "state" }, { "SYN_RECV" }, 0 },
		{ { "family" }, { "ipv6" }, 25 },
		{ { "family" }, { "IPv4" }, 75 },
		{ { "zone" }, { "5" }, 25 },
		{ { "zone" }, { "0" }, 75 },
		{ { "mark" }, { "0x21" }, 25 },
		{ { "mark" }, { "33" }, 25 },
		{ { "mark" }, { "1/0xf" }, 50 },
		{ { "mark" }, { "0" }, 50 },
		{ { "mark" }, { "0x20/0x20" }, 50 },
		{ { "src" }, { "198.18.0.1" }, 50 },
		{ { "src" }, { "fd00::1" }, 25 },
		{ { "src" }, { "198.18.0.2" }, 0 },
		{ { "dst" }, { "198.18.0.4" }, 25 },
		{ { "dst" }, { "fd00::2" }, 25 },
		{ { "proto", "src" }, { "tcp", "198.18.0.1" }, 25 },
		{ { "state", "mark" }, { "time_wait", "0x21" }, 25 },
		{ { "family", "state" }, { "ipv6", "TIME_WAIT" }, 0 },
		{ { "zone", "dst" }, { "5", "198.18.0.4" }, 25 },
	};
	struct ctc_filter f;
	struct ct_census c;
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&f, 0, sizeof(f));
		for (j = 0; j < 2 && cases[i].opt[j]; j++)
			assert_true(set_filter(&f, cases[i].opt[j],
					       cases[i].arg[j]));
		assert_null(ctc_filter_conflict(&f));
		mixed(&c, &f);
		if (c.total != cases[i].n)
			print_message("# --%s %s: %llu\n", cases[i].opt[0],
				      cases[i].arg[0],
				      (unsigned long long)c.total);
		assert_int_equal(c.total, cases[i].n);
		/* nothing of what did not match is counted */
		assert_int_equal(c.proto[IPPROTO_TCP] + c.proto[IPPROTO_UDP] +
				 c.proto[IPPROTO_ICMP], c.total);
		assert_int_equal(query_family, f.set & CTF_FAMILY ? f.family :
				 AF_UNSPEC);
		ct_census_free(&c);
	}
	/* no filter at all: every entry */
	mixed(&c, NULL);
	assert_int_equal(c.total, 100);
	ct_census_free(&c);
}

/* What each filter refuses, and filters no entry can match together */
static void test_filter_parse(void **state)
{
	static const char *const bad[][2] = {
		{ "proto", "256" }, { "proto", "-1" }, { "proto", "" },
		{ "proto", "tcpx" }, { "proto", "0x6" }, { "proto", " 6" },
		{ "state", "tw" }, { "state", "" }, { "state", "3" },
		{ "family", "inet" }, { "family", "4" },
		{ "zone", "65536" }, { "zone", "-1" }, { "zone", "0x5" },
		{ "mark", "" }, { "mark", "x" }, { "mark", "1/" },
		{ "mark", "/1" }, { "mark", "4294967296" }, { "mark", "-1" },
		{ "mark", "1/0x1/2" }, { "mark", " 1" },
		{ "src", "1.2.3" }, { "src", "fd00::1/64" }, { "dst", "x" },
	};
	struct ctc_filter f;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&f, 0, sizeof(f));
		if (set_filter(&f, bad[i][0], bad[i][1]))
			print_message("# --%s '%s' taken\n", bad[i][0],
				      bad[i][1]);
		assert_false(set_filter(&f, bad[i][0], bad[i][1]));
		assert_int_equal(f.set, 0);
	}
	memset(&f, 0, sizeof(f));
	assert_true(ctc_filter_state(&f, "LISTEN"));
	assert_int_equal(f.tcp_state, 9);
	assert_true(ctc_filter_proto(&f, "ipv6-icmp"));
	assert_int_equal(f.proto, IPPROTO_ICMPV6);
	assert_true(ctc_filter_mark(&f, "0xffffffff/0xff"));
	assert_int_equal(f.mark, 0xffffffff);
	assert_int_equal(f.mark_mask, 0xff);
	assert_true(ctc_filter_mark(&f, "7"));
	assert_int_equal(f.mark_mask, 0xffffffff);
	/* --state is TCP's */
	assert_true(ctc_filter_proto(&f, "udp"));
	assert_non_null(ctc_filter_conflict(&f));
	assert_true(ctc_filter_proto(&f, "6"));
	assert_null(ctc_filter_conflict(&f));
	/* addresses of another family than -f, or than each other */
	memset(&f, 0, sizeof(f));
	assert_true(ctc_filter_family(&f, "ipv6"));
	assert_true(ctc_filter_addr(&f, false, "198.18.0.1"));
	assert_non_null(ctc_filter_conflict(&f));
	memset(&f, 0, sizeof(f));
	assert_true(ctc_filter_addr(&f, false, "198.18.0.1"));
	assert_true(ctc_filter_addr(&f, true, "fd00::1"));
	assert_non_null(ctc_filter_conflict(&f));
}

/* ASSURED, UNREPLIED and DYING: overall and per TCP state */
static void test_status(void **state)
{
	struct ctc_filter f = { 0 };
	struct ct_census c;

	(void)state;
	mixed(&c, NULL);
	assert_int_equal(c.status.assured, 50);
	assert_int_equal(c.status.unreplied, 25);
	assert_int_equal(c.status.dying, 5);
	assert_int_equal(c.tcp_status[CTC_TCP_ESTABLISHED].assured, 25);
	assert_int_equal(c.tcp_status[CTC_TCP_TIME_WAIT].assured, 25);
	assert_int_equal(c.tcp_status[CTC_TCP_TIME_WAIT].unreplied, 0);
	assert_int_equal(c.tcp_status[CTC_TCP_TIME_WAIT].dying, 0);
	ct_census_free(&c);
	/* under a filter, those of the entries it matched */
	assert_true(ctc_filter_proto(&f, "icmp"));
	mixed(&c, &f);
	assert_int_equal(c.status.assured, 0);
	assert_int_equal(c.status.unreplied, 0);
	assert_int_equal(c.status.dying, 5);
	ct_census_free(&c);
}

static size_t count_str(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* The filter said, the census of its entries, status and -n's bounds */
static void test_print_filter(void **state)
{
	struct ctc_filter f = { 0 };
	struct ct_census c;
	char *t;

	(void)state;
	assert_true(ctc_filter_state(&f, "time_wait"));
	assert_true(ctc_filter_mark(&f, "0x1/0xf"));
	assert_true(ctc_filter_addr(&f, false, "198.18.0.1"));
	mixed(&c, &f);
	t = print_top(&c, &f, false, "", CTC_PRINT_TOP);
	assert_non_null(strstr(t, "filter --state TIME_WAIT --mark 0x1/0xf "
			       "--src 198.18.0.1\nentries dumped 100, 25 match "
			       "the filter\n"));
	assert_non_null(strstr(t, "\nby status\n  ASSURED"
			       "                                    25\n"));
	assert_non_null(strstr(t, "(early_drop evicts only entries not ASSURED"));
	assert_non_null(strstr(t, "\n  TIME_WAIT                      25"
			       "            0            0\n"));
	free(t);
	t = print_top(&c, &f, true, "", CTC_PRINT_TOP);
	assert_true(json_lines_valid(t));
	assert_non_null(strstr(t, "{\"conntrack\":{\"filter\":{\"state\":"
			       "\"TIME_WAIT\",\"mark\":1,\"mark_mask\":15,"
			       "\"src\":\"198.18.0.1\"},\"census\":{\"dumped\":100,"
			       "\"matched\":25,\"protocols\":{\"tcp\":25}"));
	assert_non_null(strstr(t, "\"status\":{\"assured\":25,"
			       "\"unreplied\":0,\"dying\":0},\"sources\""));
	free(t);
	ct_census_free(&c);
	/* -n: 1 to CTC_TOP_CAP endpoints of each list */
	census200(&c);
	t = print_top(&c, NULL, true, "", 1);
	assert_int_equal(count_str(t, "\"endpoint\""), 2);
	free(t);
	t = print_top(&c, NULL, true, "", CTC_TOP_CAP);
	/* 200 sources, 2 destinations: all of them */
	assert_int_equal(count_str(t, "\"endpoint\""), 202);
	free(t);
	ct_census_free(&c);
}

/* tcptw export: the census as gauges, endpoints bounded */
static void test_prom(void **state)
{
	struct snapshot s;
	size_t len;
	char *t;
	FILE *f;

	(void)state;
	memset(&s, 0, sizeof(s));
	census200(&s.ctc);
	s.have_ctc = true;
	f = open_memstream(&t, &len);
	assert_non_null(f);
	assert_int_equal(prom_write(f, &s, "x"), 0);
	fclose(f);
	assert_non_null(strstr(t, "# TYPE tcptw_nf_conntrack_tcp_entries gauge\n"));
	assert_non_null(strstr(t, "tcptw_nf_conntrack_tcp_entries{netns=\"x\","
			       "state=\"TIME_WAIT\"} 180\n"));
	/* every state, each time: series do not come and go */
	assert_non_null(strstr(t, "tcptw_nf_conntrack_tcp_entries{netns=\"x\","
			       "state=\"SYN_RECV\"} 0\n"));
	assert_non_null(strstr(t, "tcptw_nf_conntrack_tcp_timeout_seconds{"
			       "netns=\"x\",state=\"TIME_WAIT\"} 120\n"));
	assert_null(strstr(t, "tcptw_nf_conntrack_tcp_timeout_seconds{"
			   "netns=\"x\",state=\"SYN_RECV\"}"));
	assert_non_null(strstr(t, "tcptw_nf_conntrack_protocol_entries{"
			       "netns=\"x\",protocol=\"udp\"} 20\n"));
	assert_non_null(strstr(t, "tcptw_nf_conntrack_zone_entries{netns=\"x\","
			       "zone=\"7\"} 20\n"));
	assert_non_null(strstr(t, "tcptw_nf_conntrack_destination_entries{"
			       "netns=\"x\",protocol=\"tcp\","
			       "destination=\"127.0.0.1:9000\"} 180\n"));
	assert_non_null(strstr(t, "tcptw_nf_conntrack_destination_entries{"
			       "netns=\"x\",protocol=\"udp\","
			       "destination=\"198.18.0.1:53\"} 20\n"));
	/* 200 sources of one entry each: none holds 1% of the table */
	assert_null(strstr(t, "tcptw_nf_conntrack_source_entries{"));
	free(t);
	ct_census_free(&s.ctc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dump, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dump_million, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dump_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
		cmocka_unit_test(test_late_heavy),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_random),
		cmocka_unit_test_setup_teardown(test_print, setup, teardown),
		cmocka_unit_test(test_print_approx),
		cmocka_unit_test_setup_teardown(test_prom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filters, setup, teardown),
		cmocka_unit_test(test_filter_parse),
		cmocka_unit_test_setup_teardown(test_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_filter, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("ct_census", tests, NULL, NULL);
}
