// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "proc.h"
#include "prom.h"
#include "prom_bound.h"
#include "ctr_names.h"

struct sample {
	char family[96];
	char help[160];
	const char *type;
	char labels[400];
	char value[32];
	char suffix[16];	/* "_bucket", "_count" for histograms */
};

struct prom {
	struct sample *v;
	size_t n, cap;
	char netns[128];
	struct prom_range range;	/* the netns's ephemeral ports */
	int err;
};

void prom_escape(char *buf, size_t len, const char *s)
{
	size_t o = 0, n;

	for (; *s && o + 4 < len; s++) {
		/* label values are UTF-8: a byte that is not becomes U+FFFD */
		n = utf8_len((const unsigned char *)s);
		if (n != 1) {
			if (!n) {
				memcpy(buf + o, "\xef\xbf\xbd", 3);
				o += 3;
				continue;
			}
			if (o + n + 1 >= len)
				break;
			memcpy(buf + o, s, n);
			o += n;
			s += n - 1;
			continue;
		}
		if (*s == '\\' || *s == '"') {
			buf[o++] = '\\';
			buf[o++] = *s;
		} else if (*s == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
}

/* c[i], a capital, starts a word: after a lower case letter or digit,
 * or as the last capital of a run followed by lower case (RSTReceived).
 */
static bool word_start(const char *c, size_t i)
{
	unsigned char prev = c[i - 1], next = c[i + 1];

	return islower(prev) || isdigit(prev) || (isupper(prev) && islower(next));
}

void prom_snake(char *buf, size_t len, const char *c)
{
	size_t o = 0, i;

	for (i = 0; c[i] && o + 2 < len; i++) {
		unsigned char ch = c[i];

		if (!isalnum(ch)) {
			buf[o++] = '_';
			continue;
		}
		/* a capital after a lower case letter or digit starts a word */
		if (isupper(ch) && i > 0 && word_start(c, i))
			buf[o++] = '_';
		buf[o++] = tolower(ch);
	}
	buf[o] = '\0';
}

static void add(struct prom *p, const char *family, const char *suffix,
		const char *type, const char *help, const char *value,
		const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void add(struct prom *p, const char *family, const char *suffix,
		const char *type, const char *help, const char *value,
		const char *fmt, ...)
{
	struct sample *s;
	char extra[256] = "";
	va_list ap;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct sample *nv = realloc(p->v, cap * sizeof(*nv));

		if (!nv) {
			p->err = -ENOMEM;
			return;
		}
		p->v = nv;
		p->cap = cap;
	}
	s = &p->v[p->n++];
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(extra, sizeof(extra), fmt, ap);
		va_end(ap);
	}
	snprintf(s->family, sizeof(s->family), "%s", family);
	snprintf(s->suffix, sizeof(s->suffix), "%s", suffix ? suffix : "");
	s->type = type;
	snprintf(s->help, sizeof(s->help), "%s", help ? help : "");
	snprintf(s->labels, sizeof(s->labels), "netns=\"%s\"%s%s", p->netns,
		 *extra ? "," : "", extra);
	snprintf(s->value, sizeof(s->value), "%s", value);
}

static void addu(struct prom *p, const char *family, const char *type,
		 const char *help, uint64_t v, const char *labels)
{
	char val[32];

	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	if (labels)
		add(p, family, NULL, type, help, val, "%s", labels);
	else
		add(p, family, NULL, type, help, val, NULL);
}

/* HELP of the module's counters: the help of kmod/uapi/tcptw_counters.h */
static const char *help_of(const char *name)
{
	size_t i;

	for (i = 0; i < CTR_NR; i++)
		if (!strcmp(ctr_names[i], name))
			return ctr_helps[i];
	return NULL;
}

/* TwReuseDenied<Reason> share one family with a reason label. */
static void module_counters(struct prom *p, const struct ctrset *c)
{
	const size_t pfx = strlen(TCPTW_REUSE_DENIED_PREFIX);
	char fam[96], snake[80], lab[96];
	size_t i;

	for (i = 0; i < c->n; i++) {
		const char *n = c->v[i].name;

		if (!strncmp(n, TCPTW_REUSE_DENIED_PREFIX, pfx) && n[pfx]) {
			prom_snake(snake, sizeof(snake), n + pfx);
			snprintf(lab, sizeof(lab), "reason=\"%s\"", snake);
			addu(p, "tcptw_tw_reuse_denied_total", "counter",
			     "TIME_WAIT reuse denied by connect(), by reason",
			     c->v[i].val, lab);
			continue;
		}
		prom_snake(snake, sizeof(snake), n);
		snprintf(fam, sizeof(fam), "tcptw_%s_total", snake);
		/* a counter newer than this table: its /proc name says it */
		addu(p, fam, "counter", help_of(n) ? help_of(n) : n,
		     c->v[i].val, NULL);
	}
}

/*
 * The kernel MIBs tcptw reads, of the netns it runs in:
 * tcptw_netstat_tcpext_paws_estab_total for nstat's TcpExtPAWSEstab.
 * node_exporter's node_netstat_* families cover only node_exporter's own
 * netns, and by default not the PAWS and TIME_WAIT fields at all; these
 * are the per-netns view beside tcptw's own counters.
 */
static void mib_counters(struct prom *p, const struct ctrset *c)
{
	char fam[128], snake[80], help[128];
	size_t i, t;

	for (i = 0; i < c->n; i++) {
		const char *n = c->v[i].name;

		if (!mib_relevant(n))
			continue;
		t = !strncmp(n, "TcpExt", 6) ? 6 : 3;
		prom_snake(snake, sizeof(snake), n + t);
		snprintf(fam, sizeof(fam), "tcptw_netstat_%s_%s_total",
			 t == 6 ? "tcpext" : "tcp", snake);
		snprintf(help, sizeof(help),
			 "kernel MIB %.*s %s of this netns (nstat %s)",
			 (int)t, n, n + t, n);
		addu(p, fam, "counter", help, c->v[i].val, NULL);
	}
}

/*
 * Per remote endpoint and per listener, bounded (prom_bound.h): a peer's
 * port label only for a service port (or 0, a server-side row: every
 * source port of that address), rows that then share labels summed, and
 * the PROM_TABLE_MAX rows that counted most. A listener's port is the
 * port it listens on: always a label.
 */
static void table_rows(struct prom *p, const struct table *in, bool peers)
{
	char fam[96], lab[200], esc[96], port[32];
	struct table t;
	uint64_t pv;
	size_t r, c;
	bool gauge;

	if (prom_table_bound(in, &p->range, !peers, PROM_TABLE_MAX, &t)) {
		p->err = -ENOMEM;
		return;
	}
	for (r = 0; r < t.nrows; r++) {
		prom_escape(esc, sizeof(esc), t.rows[r].key);
		pv = table_get(&t, r, "port");
		port[0] = '\0';
		if (pv != TBL_NONE)
			snprintf(port, sizeof(port), ",port=\"%llu\"",
				 (unsigned long long)pv);
		snprintf(lab, sizeof(lab), "%s=\"%s\"%s",
			 peers ? "peer" : "addr", esc, port);
		for (c = 1; c < t.ncols; c++) {
			if (!strcmp(t.cols[c], "port") ||
			    !strncmp(t.cols[c], "last_", 5) ||
			    t.rows[r].v[c] == TBL_NONE)
				continue;
			gauge = !peers && strstr(t.cols[c], "backlog");
			snprintf(fam, sizeof(fam), "tcptw_%s_%s%s",
				 peers ? "peer" : "listener", t.cols[c],
				 gauge ? "" : "_total");
			addu(p, fam, gauge ? "gauge" : "counter",
			     peers ? "per remote endpoint (peers)" :
				     "per listening socket (listeners)",
			     t.rows[r].v[c], lab);
		}
	}
	table_free(&t);
}

static void tables(struct prom *p, const struct snapshot *s)
{
	if (!s->peers_err)
		table_rows(p, &s->peers, true);
	if (!s->listeners_err)
		table_rows(p, &s->listeners, false);
}

/*
 * The hist rows: TIME_WAIT ages as tcptw_tw_age_seconds{hist=...}, except
 * rst_received_idle (a connection's silence before a RST), its own family.
 * The module's bounds are exclusive and its ages whole milliseconds, so
 * "age < 2^k ms" is exactly Prometheus's le="(2^k - 1)/1000" seconds. The
 * module keeps bucket counts only: there is no _sum to export.
 */
static const char idle_help[] =
	"silence before a RST reset a connection, seconds (module keeps no sum)";
static const char age_help[] =
	"TIME_WAIT socket age at each decision, seconds (module keeps no sum)";

static void age_hist(struct prom *p, const struct table *t)
{
	char val[32], le[32], esc[100], lab[112];
	const char *fam, *help;
	uint64_t cum, bound;
	size_t r, c;

	for (r = 0; r < t->nrows; r++) {
		if (!strcmp(t->rows[r].key, "rst_received_idle")) {
			fam = "tcptw_rst_received_idle_seconds";
			help = idle_help;
			lab[0] = '\0';
		} else {
			fam = "tcptw_tw_age_seconds";
			help = age_help;
			prom_escape(esc, sizeof(esc), t->rows[r].key);
			snprintf(lab, sizeof(lab), "hist=\"%s\"", esc);
		}
		for (cum = 0, c = 1; c < t->ncols; c++) {
			if (hist_bound(t, c, &bound))
				break;
			if (t->rows[r].v[c] != TBL_NONE)
				cum += t->rows[r].v[c];
			if (bound == TBL_NONE)
				snprintf(le, sizeof(le), "+Inf");
			else
				snprintf(le, sizeof(le), "%g",
					 bound ? (bound - 1) / 1000.0 : 0.0);
			snprintf(val, sizeof(val), "%llu", (unsigned long long)cum);
			add(p, fam, "_bucket", "histogram", help, val,
			    "%s%sle=\"%s\"", lab, *lab ? "," : "", le);
		}
		snprintf(val, sizeof(val), "%llu", (unsigned long long)cum);
		add(p, fam, "_count", "histogram", NULL, val, "%s", lab);
	}
}

/*
 * Per destination only where this host is the client, bounded and
 * stable: the destinations that hold at least PROM_DEST_MIN_SHARE of the
 * ephemeral range, the PROM_DEST_MAX that hold most. A destination's port
 * is in its label only when it is a service port (prom_bound.h): the
 * sockets to one address on ports of the ephemeral range count as one
 * destination. A server's peers reach it on its service port, hold none
 * of its range and never show.
 */
static void census(struct prom *p, const struct census *c)
{
	size_t i, n = 0, size = 0;
	char lab[128], esc[64], val[32];
	struct prom_ep *v;
	int st;

	/* the states the dump asks for; "other" is never counted */
	for (st = 0; st < CS_OTHER; st++) {
		snprintf(lab, sizeof(lab), "state=\"%s\"",
			 census_state_name(st));
		addu(p, "tcptw_sockets", "gauge",
		     "TCP sockets by state (sock_diag)", c->total[st], lab);
	}
	if (c->port_hi && c->port_hi >= c->port_lo)
		size = c->port_hi - c->port_lo + 1;
	if (!size || !c->nremote)
		return;
	v = malloc(c->nremote * sizeof(*v));
	if (!v) {
		p->err = -ENOMEM;
		return;
	}
	for (i = 0; i < c->nremote; i++) {
		if (!c->remote[i].ephemeral)
			continue;
		prom_endpoint(lab, sizeof(lab), c->remote[i].addr,
			      c->remote[i].port, &p->range);
		prom_escape(esc, sizeof(esc), lab);
		snprintf(v[n].label, sizeof(v[n].label),
			 "destination=\"%s\"", esc);
		v[n++].n = c->remote[i].ephemeral;
	}
	n = prom_ep_top(v, n, PROM_DEST_MAX,
			(uint64_t)ceil(PROM_DEST_MIN_SHARE * size));
	for (i = 0; i < n; i++) {
		addu(p, "tcptw_ephemeral_ports_in_use", "gauge",
		     "local ports of the ephemeral range held toward a destination",
		     v[i].n, v[i].label);
		snprintf(val, sizeof(val), "%.6f", (double)v[i].n / size);
		add(p, "tcptw_ephemeral_port_share", NULL, "gauge",
		    "share of the ephemeral range held toward a destination",
		    val, "%s", v[i].label);
	}
	free(v);
}

/*
 * What fills the conntrack table (the dump of tcptw conntrack): entries by
 * protocol, TCP state (each state every time, with its timeout) and zone,
 * and the sources and destinations that hold most, bounded as the
 * ephemeral ports' destinations are: the PROM_DEST_MAX that hold most,
 * each at least PROM_DEST_MIN_SHARE of the entries.
 */
static void ct_endpoints(struct prom *p, const struct ct_census *c, bool dst)
{
	const struct ctc_top *t = dst ? &c->dst : &c->src;
	char ep[64], esc[80];
	struct ctc_key k;
	struct prom_ep *v;
	const char *pn;
	size_t i, n = 0;

	if (!t->slot || !t->used)
		return;
	v = malloc(CTC_TOP_SLOTS * sizeof(*v));
	if (!v) {
		p->err = -ENOMEM;
		return;
	}
	for (i = 0; i < CTC_TOP_SLOTS; i++) {
		if (!t->slot[i].n)
			continue;
		k = t->slot[i].k;
		if (!prom_service_port(&p->range, k.port))
			k.port = 0;	/* the address alone */
		ctc_key_str(&k, ep, sizeof(ep));
		prom_escape(esc, sizeof(esc), ep);
		pn = ct_proto_name(k.proto);
		if (dst)
			snprintf(v[n].label, sizeof(v[n].label),
				 "protocol=\"%s\",destination=\"%s\"",
				 pn ? pn : "other", esc);
		else
			snprintf(v[n].label, sizeof(v[n].label),
				 "source=\"%s\"", esc);
		v[n++].n = t->slot[i].n;
	}
	n = prom_ep_top(v, n, PROM_DEST_MAX,
			(uint64_t)ceil(PROM_DEST_MIN_SHARE * c->total));
	for (i = 0; i < n; i++) {
		if (dst)
			addu(p, "tcptw_nf_conntrack_destination_entries", "gauge",
			     "conntrack entries toward a destination (the most held)",
			     v[i].n, v[i].label);
		else
			addu(p, "tcptw_nf_conntrack_source_entries", "gauge",
			     "conntrack entries from a source address (the most held)",
			     v[i].n, v[i].label);
	}
	free(v);
}

static void ct_census(struct prom *p, const struct ct_census *c)
{
	char lab[64], val[32];
	const char *pn;
	unsigned int i;

	for (i = 0; i < 256; i++) {
		if (!c->proto[i])
			continue;
		pn = ct_proto_name(i);
		if (pn)
			snprintf(lab, sizeof(lab), "protocol=\"%s\"", pn);
		else
			snprintf(lab, sizeof(lab), "protocol=\"%u\"", i);
		addu(p, "tcptw_nf_conntrack_protocol_entries", "gauge",
		     "conntrack entries by protocol (dumped)", c->proto[i], lab);
	}
	for (i = 0; i < CTC_TCP_STATES; i++) {
		snprintf(lab, sizeof(lab), "state=\"%s\"", ct_tcp_state_name(i));
		addu(p, "tcptw_nf_conntrack_tcp_entries", "gauge",
		     "conntrack TCP entries by state (dumped)",
		     c->tcp_state[i], lab);
		if (c->timeout[i] < 0)
			continue;
		snprintf(val, sizeof(val), "%lld", c->timeout[i]);
		add(p, "tcptw_nf_conntrack_tcp_timeout_seconds", NULL, "gauge",
		    "how long conntrack holds a TCP entry in this state (nf_conntrack_tcp_timeout_*)",
		    val, "%s", lab);
	}
	for (i = 0; i < c->nzones; i++) {
		snprintf(lab, sizeof(lab), "zone=\"%u\"", c->zone[i].zone);
		addu(p, "tcptw_nf_conntrack_zone_entries", "gauge",
		     "conntrack entries by zone (dumped)", c->zone[i].n, lab);
	}
	if (c->zone_other)
		addu(p, "tcptw_nf_conntrack_zone_entries", "gauge", NULL,
		     c->zone_other, "zone=\"other\"");
	ct_endpoints(p, c, false);
	ct_endpoints(p, c, true);
}

/* by family, then in the order added: a stable sort over indexes */
static const struct prom *sort_p;

static int cmp_family(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int d = strcmp(sort_p->v[x].family, sort_p->v[y].family);

	return d ? d : x < y ? -1 : x > y;
}

/*
 * Each family once: # HELP and # TYPE, then all its samples, of every
 * netns added, together. Families in name order (n log n: --all-netns on
 * a host with hundreds of namespaces has hundreds of thousands).
 */
static int emit(FILE *f, const struct prom *p)
{
	size_t *ix = calloc(p->n ? p->n : 1, sizeof(*ix));
	const struct sample *s, *first = NULL;
	size_t i;

	if (!ix)
		return -ENOMEM;
	for (i = 0; i < p->n; i++)
		ix[i] = i;
	sort_p = p;
	qsort(ix, p->n, sizeof(*ix), cmp_family);
	for (i = 0; i < p->n; i++) {
		s = &p->v[ix[i]];
		if (!first || strcmp(first->family, s->family)) {
			first = s;
			fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", s->family,
				*s->help ? s->help : s->family, s->family,
				s->type);
		}
		fprintf(f, "%s%s{%s} %s\n", s->family, s->suffix, s->labels,
			s->value);
	}
	free(ix);
	return 0;
}

/* A sysctl as a gauge; durations in seconds, whatever unit it is set in */
static void sysctl_gauge(struct prom *p, int id, long long v)
{
	char fam[96], help[128], val[32];
	double scale = 0;

	if (id == SC_TCP_TW_REUSE_DELAY || id == SC_TCP_INVALID_RATELIMIT)
		scale = 0.001;
	else if (id == SC_TCP_KEEPALIVE_TIME ||
		 id == SC_TCP_KEEPALIVE_INTVL ||
		 id == SC_NF_CT_TCP_TIMEOUT_ESTABLISHED)
		scale = 1;
	snprintf(fam, sizeof(fam), "tcptw_sysctl_%s%s", sysctl_name(id),
		 scale ? "_seconds" : "");
	snprintf(help, sizeof(help), "sysctl %s%s", sysctl_dotted(id),
		 scale < 1 ? " (set in ms)" : "");
	if (scale)
		snprintf(val, sizeof(val), "%g", v * scale);
	else
		snprintf(val, sizeof(val), "%lld", v);
	add(p, fam, NULL, "gauge", help, val, NULL);
}

struct prom *prom_new(void)
{
	return calloc(1, sizeof(struct prom));
}

int prom_add(struct prom *p, const struct snapshot *s, const char *netns)
{
	char fam[96];
	size_t i;
	int id;

	prom_escape(p->netns, sizeof(p->netns), netns);
	/* the kernel's default range where the sysctl cannot be read */
	p->range.lo = sysctl_get(&s->sys, SC_PORT_RANGE_LO, 32768);
	p->range.hi = sysctl_get(&s->sys, SC_PORT_RANGE_HI, 60999);
	addu(p, "tcptw_module_loaded", "gauge",
	     "1 if tcptw.ko is loaded (its /proc/net/tcptw exists in this netns)",
	     s->module, NULL);
	module_counters(p, &s->mod);
	mib_counters(p, &s->mib);
	if (s->have_ct) {
		if (s->ct.have_count)
			addu(p, "tcptw_nf_conntrack_entries", "gauge",
			     "conntrack entries of this netns", s->ct.count,
			     NULL);
		if (s->ct.have_max)
			addu(p, "tcptw_nf_conntrack_max", "gauge",
			     "net.netfilter.nf_conntrack_max (the table's limit)",
			     s->ct.max, NULL);
		for (i = 0; i < s->ct.stats.n; i++) {
			snprintf(fam, sizeof(fam), "tcptw_nf_conntrack_%s_total",
				 s->ct.stats.v[i].name);
			addu(p, fam, "counter",
			     "conntrack -S statistic of this netns, summed over CPUs",
			     s->ct.stats.v[i].val, NULL);
		}
	}
	for (id = 0; id < SC_NR; id++)
		if (s->sys.have[id] && id != SC_NF_CONNTRACK_COUNT)
			sysctl_gauge(p, id, s->sys.v[id]);
	if (s->have_census)
		census(p, &s->census);
	if (s->have_ctc)
		ct_census(p, &s->ctc);
	tables(p, s);
	if (!s->hist_err)
		age_hist(p, &s->hist);
	return p->err;
}

int prom_emit(FILE *f, const struct prom *p)
{
	return p->err ? p->err : emit(f, p);
}

void prom_free(struct prom *p)
{
	if (p)
		free(p->v);
	free(p);
}

int prom_write(FILE *f, const struct snapshot *s, const char *netns)
{
	struct prom *p = prom_new();
	int err;

	if (!p)
		return -ENOMEM;
	err = prom_add(p, s, netns);
	if (!err)
		err = prom_emit(f, p);
	prom_free(p);
	return err;
}
