// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* Bounded label sets for the Prometheus exposition (prom.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom_bound.h"

bool prom_service_port(const struct prom_range *r, unsigned int port)
{
	return port && (port < r->lo || port > r->hi);
}

void prom_endpoint(char *buf, size_t len, const char *addr, unsigned int port,
		   const struct prom_range *r)
{
	if (!prom_service_port(r, port))
		snprintf(buf, len, "%s", addr);
	else if (strchr(addr, ':'))
		snprintf(buf, len, "[%s]:%u", addr, port);
	else
		snprintf(buf, len, "%s:%u", addr, port);
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct prom_ep *)a)->label,
		      ((const struct prom_ep *)b)->label);
}

static int cmp_most(const void *a, const void *b)
{
	const struct prom_ep *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->label, y->label);
}

size_t prom_ep_top(struct prom_ep *v, size_t n, size_t max, uint64_t min)
{
	size_t i, k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_label);
	for (i = 1; i < n; i++) {
		if (!strcmp(v[k].label, v[i].label)) {
			v[k].n += v[i].n;
			continue;
		}
		v[++k] = v[i];
	}
	n = k + 1;
	qsort(v, n, sizeof(*v), cmp_most);
	for (k = 0; k < n && k < max && v[k].n >= min; k++)
		;
	return k;
}

/* rows by key, then port (TBL_NONE last) */
static int cmp_row(const struct tbl_row *a, const struct tbl_row *b, int pc)
{
	int d = strcmp(a->key, b->key);

	if (d || pc < 0)
		return d;
	return a->v[pc] < b->v[pc] ? -1 : a->v[pc] > b->v[pc];
}

static int sort_pc;

static int cmp_row_q(const void *a, const void *b)
{
	return cmp_row(a, b, sort_pc);
}

/* the table whose rows prom_table_bound ranks: its count sums */
static const struct table *rank_t;

static int cmp_moved(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t mx = table_row_moved(rank_t, x), my = table_row_moved(rank_t, y);

	if (mx != my)
		return mx > my ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* @dst += @src, cell by cell: counts summed, last_* the most recent */
static void row_merge(const struct table *t, struct tbl_row *dst,
		      const struct tbl_row *src)
{
	size_t c;

	for (c = 1; c < t->ncols; c++) {
		if (!strcmp(t->cols[c], "port") || src->v[c] == TBL_NONE)
			continue;
		if (dst->v[c] == TBL_NONE)
			dst->v[c] = src->v[c];
		else if (!strncmp(t->cols[c], "last_", 5))
			dst->v[c] = src->v[c] < dst->v[c] ? src->v[c] : dst->v[c];
		else
			dst->v[c] += src->v[c];
	}
}

int prom_table_bound(const struct table *in, const struct prom_range *r,
		     bool keep_ports, size_t max, struct table *out)
{
	struct tbl_row *rows;
	size_t i, k = 0, *ix;
	uint64_t port;
	int pc = table_col(in, "port");

	memset(out, 0, sizeof(*out));
	out->ncols = in->ncols;
	memcpy(out->cols, in->cols, sizeof(out->cols));
	if (!in->nrows)
		return 0;
	rows = malloc(in->nrows * sizeof(*rows));
	ix = malloc(in->nrows * sizeof(*ix));
	if (!rows || !ix) {
		free(rows);
		free(ix);
		return -ENOMEM;
	}
	memcpy(rows, in->rows, in->nrows * sizeof(*rows));
	for (i = 0; pc >= 0 && !keep_ports && i < in->nrows; i++) {
		port = rows[i].v[pc];
		if (port && port != TBL_NONE &&
		    (port > 65535 || !prom_service_port(r, port)))
			rows[i].v[pc] = TBL_NONE;
	}
	sort_pc = pc;
	qsort(rows, in->nrows, sizeof(*rows), cmp_row_q);
	for (i = 1; i < in->nrows; i++) {
		if (!cmp_row(&rows[k], &rows[i], pc)) {
			row_merge(in, &rows[k], &rows[i]);
			continue;
		}
		rows[++k] = rows[i];
	}
	out->nrows = k + 1;
	out->rows = rows;
	if (out->nrows <= max) {
		free(ix);
		return 0;
	}
	/* the @max that counted most, then back in key order */
	for (i = 0; i < out->nrows; i++)
		ix[i] = i;
	rank_t = out;
	qsort(ix, out->nrows, sizeof(*ix), cmp_moved);
	qsort(ix, max, sizeof(*ix), cmp_index);
	for (i = 0; i < max; i++)
		rows[i] = rows[ix[i]];
	out->nrows = max;
	free(ix);
	return 0;
}
