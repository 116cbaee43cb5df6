// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tables.h"

static int parse_cell(const char *s, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "-")) {
		*v = TBL_NONE;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int parse_header(struct table *t, char *line)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(line, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		if (t->ncols == TBL_MAX_COLS || strlen(tok) >= TBL_COL_LEN)
			break;	/* columns beyond what we know: ignored */
		strcpy(t->cols[t->ncols++], tok);
	}
	return t->ncols >= 2 ? 0 : -EINVAL;
}

static int parse_row(const struct table *t, char *line, struct tbl_row *r)
{
	char *save = NULL, *tok;
	size_t c = 0;

	for (c = 1; c < TBL_MAX_COLS; c++)
		r->v[c] = TBL_NONE;
	tok = strtok_r(line, " \t\r", &save);
	if (!tok || strlen(tok) >= sizeof(r->key))
		return -EINVAL;
	strcpy(r->key, tok);
	for (c = 1; c < t->ncols; c++) {
		tok = strtok_r(NULL, " \t\r", &save);
		if (!tok)
			break;	/* short row: remaining cells missing */
		if (parse_cell(tok, &r->v[c]))
			return -EINVAL;
	}
	return 0;
}

int table_parse(const char *buf, struct table *t)
{
	char *copy, *line, *save = NULL;
	struct tbl_row row, *nv;
	size_t cap = 0;
	int err = 0;

	memset(t, 0, sizeof(*t));
	copy = strdup(buf);
	if (!copy)
		return -ENOMEM;
	line = strtok_r(copy, "\n", &save);
	if (!line || parse_header(t, line)) {
		free(copy);
		return -EINVAL;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		if (parse_row(t, line, &row))
			continue;
		if (t->nrows == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(t->rows, cap * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			t->rows = nv;
		}
		t->rows[t->nrows++] = row;
	}
	free(copy);
	if (err) {
		table_free(t);
		return err;
	}
	return t->nrows;
}

void table_free(struct table *t)
{
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

int table_col(const struct table *t, const char *name)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c], name))
			return c;
	return -1;
}

uint64_t table_get(const struct table *t, size_t row, const char *col)
{
	int c = table_col(t, col);

	if (c < 1 || row >= t->nrows)
		return TBL_NONE;
	return t->rows[row].v[c];
}

long table_find(const struct table *t, const char *key, int port)
{
	size_t r;

	for (r = 0; r < t->nrows; r++) {
		if (strcmp(t->rows[r].key, key))
			continue;
		if (port >= 0 && table_get(t, r, "port") != (uint64_t)port)
			continue;
		return r;
	}
	return -1;
}

int hist_bound(const struct table *t, size_t col, uint64_t *le)
{
	if (col < 1 || col >= t->ncols)
		return -EINVAL;
	if (!strcmp(t->cols[col], "+Inf")) {
		*le = TBL_NONE;
		return 0;
	}
	return parse_cell(t->cols[col], le);
}

bool table_col_gauge(const char *col)
{
	return !strcmp(col, "port") || !strcmp(col, "backlog") ||
	       !strcmp(col, "max_backlog") || !strncmp(col, "last_", 5);
}

int table_delta(const struct table *base, const struct table *cur,
		struct table *out)
{
	size_t r, c;
	long b;
	int pc;

	memset(out, 0, sizeof(*out));
	out->ncols = cur->ncols;
	memcpy(out->cols, cur->cols, sizeof(out->cols));
	if (!cur->nrows)
		return 0;
	out->rows = calloc(cur->nrows, sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	pc = table_col(cur, "port");
	for (r = 0; r < cur->nrows; r++) {
		const struct tbl_row *row = &cur->rows[r];
		struct tbl_row *o = &out->rows[out->nrows++];

		*o = *row;
		b = table_find(base, row->key, pc < 0 ? -1 :
			       (int)row->v[pc]);
		for (c = 1; b >= 0 && c < cur->ncols; c++) {
			uint64_t was = table_get(base, b, cur->cols[c]);

			if (table_col_gauge(cur->cols[c]) ||
			    row->v[c] == TBL_NONE || was == TBL_NONE)
				continue;
			/* a row taken over by another key started from 0 */
			o->v[c] = row->v[c] >= was ? row->v[c] - was :
				  row->v[c];
		}
	}
	return 0;
}

uint64_t table_row_moved(const struct table *t, size_t row)
{
	uint64_t n = 0;
	size_t c;

	for (c = 1; c < t->ncols; c++)
		if (!table_col_gauge(t->cols[c]) &&
		    t->rows[row].v[c] != TBL_NONE)
			n += t->rows[row].v[c];
	return n;
}

size_t table_top_moved(const struct table *t, size_t *idx, size_t max)
{
	size_t r, i, n = 0;
	uint64_t m;

	for (r = 0; r < t->nrows; r++) {
		m = table_row_moved(t, r);
		if (!m)
			continue;
		/* insertion into the sorted top @max: tables are small */
		for (i = n; i > 0 && table_row_moved(t, idx[i - 1]) < m; i--)
			if (i < max)
				idx[i] = idx[i - 1];
		if (i < max) {
			idx[i] = r;
			if (n < max)
				n++;
		}
	}
	return n;
}
