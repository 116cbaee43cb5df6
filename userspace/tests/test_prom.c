// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * The exposition's series stay bounded (issue 45; docs/install.md,
 * "Series per host"): a storm of 10,000 destinations, ports, peers,
 * listeners and conntrack entries adds a fixed number of series, none
 * with a port of the ephemeral range in a label, and the same storm on
 * other ephemeral ports gives the same series (no churn).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "testlib.h"
#include "prom.h"
#include "prom_bound.h"

#define STORM 10000
#define LO 32768
#define HI 60999

/* a snapshot with the range set and nothing else */
static void snap_init(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->module = true;
	s->sys.have[SC_PORT_RANGE_LO] = true;
	s->sys.v[SC_PORT_RANGE_LO] = LO;
	s->sys.have[SC_PORT_RANGE_HI] = true;
	s->sys.v[SC_PORT_RANGE_HI] = HI;
	s->peers_err = s->listeners_err = s->hist_err = -ENOENT;
}

/*
 * The storm, its ephemeral ports shifted by @shift: STORM sockets to
 * STORM addresses (one port each: below the share exported), STORM to
 * one address on as many ports of the range (a server on ports the
 * kernel picked), 20 busy destinations on 443; the same in conntrack;
 * STORM peers rows and STORM listeners.
 */
static void storm(struct snapshot *s, unsigned int shift)
{
	char addr[48], *buf, *p;
	struct ctc_entry e;
	unsigned int i;
	size_t len = 64 * (STORM + 2);

	snap_init(s);
	s->have_census = true;
	census_init(&s->census, LO, HI);
	for (i = 0; i < STORM; i++) {
		snprintf(addr, sizeof(addr), "10.%u.%u.1", i / 256, i % 256);
		assert_int_equal(census_add(&s->census, TCP_ESTABLISHED,
					    LO + (i + shift) % 28000, addr,
					    LO + (i * 7 + shift) % 28000), 0);
		assert_int_equal(census_add(&s->census, TCP_TIME_WAIT,
					    LO + (i + shift) % 28000,
					    "198.18.0.9",
					    LO + (i + shift) % 28000), 0);
	}
	for (i = 0; i < 20 * 300; i++) {
		snprintf(addr, sizeof(addr), "192.0.2.%u", i % 20);
		assert_int_equal(census_add(&s->census, TCP_ESTABLISHED,
					    LO + i % 28000, addr, 443), 0);
	}

	s->have_ctc = true;
	assert_int_equal(ct_census_init(&s->ctc), 0);
	memset(&e, 0, sizeof(e));
	e.family = AF_INET;
	e.proto = IPPROTO_TCP;
	e.have_state = true;
	e.tcp_state = CTC_TCP_ESTABLISHED;
	for (i = 0; i < STORM; i++) {
		e.src[0] = 10;
		e.src[1] = i / 256;
		e.src[2] = i % 256;
		e.src[3] = 2;
		inet_pton(AF_INET, i % 2 ? "198.18.0.9" : "198.18.0.10", e.dst);
		e.dport = LO + (i + shift) % 28000;
		ct_census_add(&s->ctc, &e);
	}

	buf = malloc(len);
	assert_non_null(buf);
	p = buf + sprintf(buf, "addr port reuse_granted port_exhausted syn_paws_rejected last_ms\n");
	for (i = 0; i < STORM; i++)
		p += sprintf(p, "10.%u.%u.3 %u %u %u 0 5\n", i / 256, i % 256,
			     i % 3 ? LO + (i + shift) % 28000 : 8080, i, i % 5);
	p += sprintf(p, "198.18.0.1 0 0 0 7 1\n");
	assert_int_equal(table_parse(buf, &s->peers), STORM + 1);
	s->peers_err = 0;
	p = buf + sprintf(buf, "addr port backlog max_backlog overflow_syn overflow_ack last_overflow_ms\n");
	for (i = 0; i < STORM; i++)
		p += sprintf(p, "198.18.%u.%u %u 1 10 %u 0 -\n", i / 256,
			     i % 256, LO + (i + shift) % 28000, i);
	assert_int_equal(table_parse(buf, &s->listeners), STORM);
	s->listeners_err = 0;
	free(buf);
}

static char *export(const struct snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(prom_write(f, s, "ns"), 0);
	fclose(f);
	return buf;
}

/* samples (not comments) of @t; of the family @fam+'{' if not NULL */
static size_t series(const char *t, const char *fam)
{
	size_t n = 0, fl = fam ? strlen(fam) : 0;
	const char *l;

	for (l = t; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (*l == '#' || *l == '\n')
			continue;
		if (!fam || (!strncmp(l, fam, fl) && l[fl] == '{'))
			n++;
	}
	return n;
}

/* no label value ends in ":<port of the ephemeral range>", no port="" is */
static void no_ephemeral_port(const char *t)
{
	const char *q;
	unsigned int port;

	for (q = strstr(t, ":"); q; q = strstr(q + 1, ":")) {
		if (sscanf(q, ":%u\"", &port) == 1 && strchr("0123456789", q[1]))
			assert_true(port < LO || port > HI);
	}
	for (q = strstr(t, "port=\""); q; q = strstr(q + 1, "port=\"")) {
		assert_int_equal(sscanf(q, "port=\"%u\"", &port), 1);
		assert_true(port < LO || port > HI || strstr(t, "tcptw_listener"));
	}
}

static void test_storm_bounded(void **state)
{
	struct snapshot base, s;
	char *tb, *t;
	size_t nb, n;

	(void)state;
	snap_init(&base);
	tb = export(&base);
	storm(&s, 0);
	t = export(&s);
	nb = series(tb, NULL);
	n = series(t, NULL);
	print_message("# series: %zu without endpoints, %zu with the storm "
		      "(%d destinations, peers, listeners, conntrack entries)\n",
		      nb, n, STORM);
	/* each per-endpoint family: PROM_DEST_MAX or PROM_TABLE_MAX */
	assert_int_equal(series(t, "tcptw_ephemeral_ports_in_use"),
			 PROM_DEST_MAX);
	assert_int_equal(series(t, "tcptw_ephemeral_port_share"),
			 PROM_DEST_MAX);
	assert_true(series(t, "tcptw_nf_conntrack_destination_entries") <=
		    PROM_DEST_MAX);
	assert_true(series(t, "tcptw_nf_conntrack_source_entries") <=
		    PROM_DEST_MAX);
	/* peers: 3 count columns; listeners: 2 gauges, 2 counts */
	assert_int_equal(series(t, "tcptw_peer_reuse_granted_total"),
			 PROM_TABLE_MAX);
	assert_int_equal(series(t, "tcptw_listener_overflow_syn_total"),
			 PROM_TABLE_MAX);
	assert_true(n <= nb + 2 * PROM_DEST_MAX + 2 * PROM_DEST_MAX +
			 3 * PROM_TABLE_MAX + 4 * PROM_TABLE_MAX +
			 CTC_TCP_STATES * 2 + 1);
	/* the 10,000 ports of one address: one destination, whole */
	assert_non_null(strstr(t, "tcptw_ephemeral_ports_in_use{netns=\"ns\","
			       "destination=\"198.18.0.9\"} 10000\n"));
	assert_non_null(strstr(t, "destination=\"192.0.2.0:443\"} 300\n"));
	/*
	 * conntrack: one address on 5,000 ports of the range is one
	 * destination; its count is of the endpoints the census could tell
	 * apart (CTC_TOP_SLOTS), a lower bound in a storm this size
	 */
	assert_non_null(strstr(t, "tcptw_nf_conntrack_destination_entries{"
			       "netns=\"ns\",protocol=\"tcp\",destination="
			       "\"198.18.0.9\"} "));
	/* the peers rows that counted most; the server side keeps port 0 */
	assert_non_null(strstr(t, "tcptw_peer_reuse_granted_total{netns=\"ns\","
			       "peer=\"10.39.15.3\",port=\"8080\"} 9999\n"));
	assert_non_null(strstr(t, "tcptw_peer_reuse_granted_total{netns=\"ns\","
			       "peer=\"10.39.14.3\"} 9998\n"));
	assert_non_null(strstr(t, "tcptw_peer_syn_paws_rejected_total{netns="
			       "\"ns\",peer=\"10.39.14.3\"} 0\n"));
	no_ephemeral_port(t);
	free(tb);
	free(t);
	snapshot_free(&base);
	snapshot_free(&s);
}

/* the same storm on other ephemeral ports: the same series, no churn */
static void test_storm_stable(void **state)
{
	struct snapshot a, b;
	char *ta, *tb, *la, *lb;

	(void)state;
	storm(&a, 0);
	storm(&b, 1000);
	ta = export(&a);
	tb = export(&b);
	/* label sets only: listeners keep their ports (listening ones) */
	for (la = ta, lb = tb; la && lb;) {
		size_t ka = strcspn(la, " \n"), kb = strcspn(lb, " \n");

		if (strncmp(la, "tcptw_listener", 14) && *la != '#') {
			assert_int_equal(ka, kb);
			assert_memory_equal(la, lb, ka);
		}
		la = strchr(la, '\n');
		lb = strchr(lb, '\n');
		la = la ? la + 1 : NULL;
		lb = lb ? lb + 1 : NULL;
	}
	assert_true(!la == !lb);
	free(ta);
	free(tb);
	snapshot_free(&a);
	snapshot_free(&b);
}

static void test_endpoint(void **state)
{
	struct prom_range r = { LO, HI };
	char buf[64];

	(void)state;
	prom_endpoint(buf, sizeof(buf), "198.18.0.2", 8080, &r);
	assert_string_equal(buf, "198.18.0.2:8080");
	prom_endpoint(buf, sizeof(buf), "198.18.0.2", 45000, &r);
	assert_string_equal(buf, "198.18.0.2");
	prom_endpoint(buf, sizeof(buf), "fd00::2", 443, &r);
	assert_string_equal(buf, "[fd00::2]:443");
	prom_endpoint(buf, sizeof(buf), "fd00::2", 0, &r);
	assert_string_equal(buf, "fd00::2");
	assert_false(prom_service_port(&r, LO));
	assert_false(prom_service_port(&r, HI));
	assert_true(prom_service_port(&r, HI + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_storm_bounded),
		cmocka_unit_test(test_storm_stable),
	};

	return cmocka_run_group_tests_name("prom", tests, NULL, NULL);
}
