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

/* the wrapped library: a fake handle, and entries made up per call */
static int open_errno, query_errno;
static unsigned long dump_n;
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

int __wrap_nfct_query(struct nfct_handle *h, enum nf_conntrack_query q,
		      const void *data);
int __wrap_nfct_query(struct nfct_handle *h, enum nf_conntrack_query q,
		      const void *data)
{
	struct nf_conntrack *ct;
	unsigned long i;

	assert_ptr_equal(h, &fake_handle);
	assert_int_equal(q, NFCT_Q_DUMP);
	assert_int_equal(*(const uint32_t *)data, AF_UNSPEC);
	if (query_errno) {
		errno = query_errno;
		return -1;
	}
	/* one object reused: the census must not keep it */
	ct = nfct_new();
	assert_non_null(ct);
	for (i = 0; i < dump_n; i++) {
		fill(ct, i);
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
	assert_int_equal(ct_census_init(c), 0);
	assert_int_equal(ct_census_collect(c), 0);
}

static char *print(const struct ct_census *c, bool json, const char *ind)
{
	struct out o;
	size_t len;
	char *buf;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	out_init(&o, f, json);
	out_obj_open(&o, NULL);
	out_obj_open(&o, "conntrack");
	print_ct_census(&o, c, ind);
	out_obj_close(&o);
	out_obj_close(&o);
	fclose(f);
	return buf;
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
			       "\"nf_conntrack_tcp_timeout_time_wait\"}},"
			       "\"zones\":{\"7\":20,\"0\":180}"));
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
	};

	return cmocka_run_group_tests_name("ct_census", tests, NULL, NULL);
}
