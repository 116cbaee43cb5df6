// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/* libFuzzer: the peers/listeners/hist header-table parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tables.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	struct table t;
	uint64_t le;
	size_t r, c;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (table_parse(buf, &t) >= 0) {
		for (c = 0; c <= t.ncols; c++)
			hist_bound(&t, c, &le);
		for (r = 0; r < t.nrows; r++) {
			table_get(&t, r, "port");
			table_find(&t, t.rows[r].key, r & 1 ? -1 : 80);
		}
		table_free(&t);
	}
	free(buf);
	return 0;
}
