// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* tcptw peers, tcptw listeners: the module's per-endpoint tables. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "proc.h"
#include "tables.h"

static int print_table(const struct opts *opt, const char *file)
{
	struct table t;
	struct out o;
	size_t r, c;
	char rel[64];
	char *buf;
	int err;

	err = need_module(file);
	if (err)
		return err;
	snprintf(rel, sizeof(rel), TCPTW_DIR "/%s", file);
	buf = tcptw_read(rel, NULL);
	if (!buf)
		return table_err(file, -errno);
	err = table_parse(buf, &t);
	free(buf);
	if (err < 0)
		return fail(rel, err);
	out_init(&o, stdout, opt->json);
	o.pretty = opt->pretty;
	out_arr_open(&o, NULL);
	for (c = 0; c < t.ncols; c++)
		out_text(&o, c ? " %*s" : "%-*s", c ? (int)strlen(t.cols[c]) :
			 40, t.cols[c]);
	out_text(&o, "\n");
	for (r = 0; r < t.nrows; r++) {
		out_obj_open(&o, NULL);
		out_str(&o, t.cols[0], "%-40s", t.rows[r].key);
		for (c = 1; c < t.ncols; c++) {
			if (t.rows[r].v[c] == TBL_NONE) {
				out_null(&o, t.cols[c], "");
				out_text(&o, " %*s", (int)strlen(t.cols[c]),
					 "-");
				continue;
			}
			out_u64(&o, t.cols[c], NULL, t.rows[r].v[c]);
			out_text(&o, " %*llu", (int)strlen(t.cols[c]),
				 (unsigned long long)t.rows[r].v[c]);
		}
		out_text(&o, "\n");
		out_obj_close(&o);
	}
	out_arr_close(&o);
	if (!opt->json && !t.nrows)
		printf("(no rows)\n");
	table_free(&t);
	return EXIT_OK;
}

int cmd_peers(const struct opts *opt)
{
	return print_table(opt, "peers");
}

int cmd_listeners(const struct opts *opt)
{
	return print_table(opt, "listeners");
}
