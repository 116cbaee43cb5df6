// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"

struct sample {
	char family[96];
	const char *help;
	const char *type;
	char labels[400];
	char value[32];
	char suffix[16];	/* "_bucket", "_count" for histograms */
};

struct prom {
	struct sample *v;
	size_t n, cap;
	char netns[128];
	int err;
};

void prom_escape(char *buf, size_t len, const char *s)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
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
	s->help = help;
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

/* TwReuseDenied<Reason> share one family with a reason label. */
static void module_counters(struct prom *p, const struct ctrset *c)
{
	char fam[96], snake[80], lab[96];
	size_t i;

	for (i = 0; i < c->n; i++) {
		const char *n = c->v[i].name;

		if (!strncmp(n, "TwReuseDenied", 13) && n[13]) {
			prom_snake(snake, sizeof(snake), n + 13);
			snprintf(lab, sizeof(lab), "reason=\"%s\"", snake);
			addu(p, "tcptw_tw_reuse_denied_total", "counter",
			     "TIME_WAIT reuse denied by connect(), by reason",
			     c->v[i].val, lab);
			continue;
		}
		prom_snake(snake, sizeof(snake), n);
		snprintf(fam, sizeof(fam), "tcptw_%s_total", snake);
		addu(p, fam, "counter", n, c->v[i].val, NULL);
	}
}

static void mib_counters(struct prom *p, const struct ctrset *c)
{
	char fam[96], tag[16];
	size_t i, t;

	for (i = 0; i < c->n; i++) {
		const char *n = c->v[i].name;

		if (!mib_relevant(n))
			continue;
		t = !strncmp(n, "TcpExt", 6) ? 6 : 3;
		snprintf(tag, sizeof(tag), "%.*s", (int)t, n);
		snprintf(fam, sizeof(fam), "tcptw_netstat_%s_%s_total", tag,
			 n + t);
		addu(p, fam, "counter", "kernel MIB counter (nstat name)",
		     c->v[i].val, NULL);
	}
}

static void tables(struct prom *p, const struct snapshot *s)
{
	char fam[96], lab[200], esc[96];
	size_t r, c;

	for (r = 0; !s->peers_err && r < s->peers.nrows; r++) {
		const struct table *t = &s->peers;

		prom_escape(esc, sizeof(esc), t->rows[r].key);
		snprintf(lab, sizeof(lab), "peer=\"%s\",port=\"%llu\"",
			 esc, (unsigned long long)table_get(t, r, "port"));
		for (c = 1; c < t->ncols; c++) {
			if (!strcmp(t->cols[c], "port") ||
			    !strncmp(t->cols[c], "last_", 5) ||
			    t->rows[r].v[c] == TBL_NONE)
				continue;
			snprintf(fam, sizeof(fam), "tcptw_peer_%s_total",
				 t->cols[c]);
			addu(p, fam, "counter", "per remote endpoint (peers)",
			     t->rows[r].v[c], lab);
		}
	}
	for (r = 0; !s->listeners_err && r < s->listeners.nrows; r++) {
		const struct table *t = &s->listeners;
		bool gauge;

		prom_escape(esc, sizeof(esc), t->rows[r].key);
		snprintf(lab, sizeof(lab), "addr=\"%s\",port=\"%llu\"",
			 esc, (unsigned long long)table_get(t, r, "port"));
		for (c = 1; c < t->ncols; c++) {
			if (!strcmp(t->cols[c], "port") ||
			    !strncmp(t->cols[c], "last_", 5) ||
			    t->rows[r].v[c] == TBL_NONE)
				continue;
			gauge = strstr(t->cols[c], "backlog");
			snprintf(fam, sizeof(fam), "tcptw_listener_%s%s",
				 t->cols[c], gauge ? "" : "_total");
			addu(p, fam, gauge ? "gauge" : "counter",
			     "per listening socket (listeners)",
			     t->rows[r].v[c], lab);
		}
	}
}

/*
 * The hist rows: TIME_WAIT ages as tcptw_tw_age_ms{hist=...}, except
 * rst_received_idle (a connection's silence before a RST), its own family.
 */
static const char idle_help[] =
	"silence in ms before a RST reset a connection (buckets only, no _sum)";

static void age_hist(struct prom *p, const struct table *t)
{
	char val[32], le[32], esc[100], lab[112];
	const char *fam, *help;
	uint64_t cum, bound;
	size_t r, c;

	for (r = 0; r < t->nrows; r++) {
		if (!strcmp(t->rows[r].key, "rst_received_idle")) {
			fam = "tcptw_rst_received_idle_ms";
			help = idle_help;
			lab[0] = '\0';
		} else {
			fam = "tcptw_tw_age_ms";
			help = "TIME_WAIT age in ms (buckets only, no _sum)";
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
				snprintf(le, sizeof(le), "%llu",
					 (unsigned long long)bound);
			snprintf(val, sizeof(val), "%llu", (unsigned long long)cum);
			add(p, fam, "_bucket", "histogram", help, val,
			    "%s%sle=\"%s\"", lab, *lab ? "," : "", le);
		}
		snprintf(val, sizeof(val), "%llu", (unsigned long long)cum);
		add(p, fam, "_count", "histogram", NULL, val, "%s", lab);
	}
}

static void census(struct prom *p, const struct census *c)
{
	char lab[128], esc[64], val[32];
	size_t i;
	int st;

	for (st = 0; st < CS_NR; st++) {
		snprintf(lab, sizeof(lab), "state=\"%s\"",
			 census_state_name(st));
		addu(p, "tcptw_sockets", "gauge",
		     "TCP sockets by state (sock_diag)", c->total[st], lab);
	}
	/* top destinations only: bounded label cardinality */
	for (i = 0; i < c->nremote && i < 20; i++) {
		prom_escape(esc, sizeof(esc), c->remote[i].addr);
		snprintf(lab, sizeof(lab), "destination=\"%s:%u\"", esc,
			 c->remote[i].port);
		addu(p, "tcptw_ephemeral_ports_in_use", "gauge",
		     "local ports of the ephemeral range used for a destination",
		     c->remote[i].ephemeral, lab);
		snprintf(val, sizeof(val), "%.6f",
			 census_share(c, &c->remote[i]));
		add(p, "tcptw_ephemeral_port_share", NULL, "gauge",
		    "share of the ephemeral range used for a destination",
		    val, "%s", lab);
	}
}

static void emit(FILE *f, const struct prom *p)
{
	bool *done = calloc(p->n ? p->n : 1, sizeof(*done));
	size_t i, j;

	for (i = 0; done && i < p->n; i++) {
		if (done[i])
			continue;
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", p->v[i].family,
			p->v[i].help ? p->v[i].help : p->v[i].family,
			p->v[i].family, p->v[i].type);
		for (j = i; j < p->n; j++) {
			if (done[j] || strcmp(p->v[j].family, p->v[i].family))
				continue;
			done[j] = true;
			fprintf(f, "%s%s{%s} %s\n", p->v[j].family,
				p->v[j].suffix, p->v[j].labels, p->v[j].value);
		}
	}
	free(done);
}

int prom_write(FILE *f, const struct snapshot *s, const char *netns)
{
	struct prom p = { 0 };
	char fam[96];
	size_t i;
	int id;

	prom_escape(p.netns, sizeof(p.netns), netns);
	addu(&p, "tcptw_module_loaded", "gauge",
	     "1 if tcptw.ko's /proc/net/tcptw is present", s->module, NULL);
	module_counters(&p, &s->mod);
	mib_counters(&p, &s->mib);
	if (s->have_ct) {
		if (s->ct.have_count)
			addu(&p, "tcptw_nf_conntrack_entries", "gauge",
			     "conntrack entries", s->ct.count, NULL);
		if (s->ct.have_max)
			addu(&p, "tcptw_nf_conntrack_max", "gauge",
			     "nf_conntrack_max", s->ct.max, NULL);
		for (i = 0; i < s->ct.stats.n; i++) {
			snprintf(fam, sizeof(fam), "tcptw_nf_conntrack_%s_total",
				 s->ct.stats.v[i].name);
			addu(&p, fam, "counter",
			     "conntrack statistic, summed over CPUs",
			     s->ct.stats.v[i].val, NULL);
		}
	}
	for (id = 0; id < SC_NR; id++) {
		if (!s->sys.have[id] || id == SC_NF_CONNTRACK_COUNT)
			continue;
		snprintf(fam, sizeof(fam), "tcptw_sysctl_%s", sysctl_name(id));
		addu(&p, fam, "gauge", sysctl_dotted(id), s->sys.v[id], NULL);
	}
	if (s->have_census)
		census(&p, &s->census);
	tables(&p, s);
	if (!s->hist_err)
		age_hist(&p, &s->hist);
	if (!p.err)
		emit(f, &p);
	free(p.v);
	return p.err;
}
