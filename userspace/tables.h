/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_TABLES_H
#define _TCPTW_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The module's header tables: peers, listeners and hist. A header line names
 * the columns, then one row per key. Column 0 is a string (an address, a
 * histogram name); every other cell is a decimal u64 or "-" (TBL_NONE).
 * Columns are appended to the ABI over time, so readers look columns up by
 * name and treat a missing one as TBL_NONE.
 */
#define TBL_NONE UINT64_MAX
#define TBL_MAX_COLS 48
#define TBL_COL_LEN 32

struct tbl_row {
	char key[48];
	uint64_t v[TBL_MAX_COLS];	/* v[0] unused: the key column */
};

struct table {
	size_t ncols;
	char cols[TBL_MAX_COLS][TBL_COL_LEN];
	size_t nrows;
	struct tbl_row *rows;
};

/* Returns the number of rows, or -EINVAL (no header) / -ENOMEM. */
int table_parse(const char *buf, struct table *t);
void table_free(struct table *t);
int table_col(const struct table *t, const char *name);
/* Cell by column name; TBL_NONE if the column or value is missing. */
uint64_t table_get(const struct table *t, size_t row, const char *col);
/* Row whose key (and "port" column, when @port >= 0) match; -1 if none. */
long table_find(const struct table *t, const char *key, int port);

/* A column that is a level (port, backlog, last_*_ms), not a count. */
bool table_col_gauge(const char *col);
/*
 * @cur less @base, row by row (matched by key and port): what each row's
 * counts gained in between. Gauge columns, and rows @base lacks, are as in
 * @cur; a count that went backwards (the row was taken over by another
 * endpoint) counts from 0. -ENOMEM; free @out with table_free().
 */
int table_delta(const struct table *base, const struct table *cur,
		struct table *out);
/* The sum of a row's count columns. */
uint64_t table_row_moved(const struct table *t, size_t row);
/* Up to @max rows that moved, most first, into @idx; how many. */
size_t table_top_moved(const struct table *t, size_t *idx, size_t max);

/* The hist file: le_ms bounds in the header, "+Inf" as TBL_NONE. */
int hist_bound(const struct table *t, size_t col, uint64_t *le);

#endif /* _TCPTW_TABLES_H */
