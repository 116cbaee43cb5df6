/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The tcptw authors. */
#ifndef _TCPTW_TABLES_H
#define _TCPTW_TABLES_H

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

/* The hist file: le_ms bounds in the header, "+Inf" as TBL_NONE. */
int hist_bound(const struct table *t, size_t col, uint64_t *le);

#endif /* _TCPTW_TABLES_H */
